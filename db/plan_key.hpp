#pragma once
// The plan cache key (ARCHITECTURE.md "Plans and the cache"): the same structure on the same
// device in the same precision, tuned by the same tuner version, gets the same plan.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/fingerprint.hpp"
#include "core/precision.hpp"

namespace spmvd {

struct PlanKey {
  Fingerprint fingerprint;
  std::string device_signature;  // DeviceInfo::signature()
  Precision precision = Precision::fp64;
  std::uint32_t tuner_version = 0;

  friend bool operator==(const PlanKey&, const PlanKey&) = default;
};

// For logs: "fingerprint=0123...ef device='gpu|...' precision=fp64 tuner_version=3".
std::string to_string(const PlanKey& key);

// Inverse of Fingerprint::hex() (32 hex digits, high word first); nullopt for anything else.
// Stores keep the fingerprint as text so that a person can read and query it.
std::optional<Fingerprint> fingerprint_from_hex(std::string_view hex) noexcept;

}  // namespace spmvd
