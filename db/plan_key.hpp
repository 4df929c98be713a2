#pragma once
// The plan cache key (ARCHITECTURE.md "Plans and the cache"): the same structure on the same
// device in the same precision, tuned by the same tuner and ranked by the same performance
// models, gets the same plan.
//
// Invalidation (docs/OPERATIONS.md "Plan cache and cluster"): a key component that changes
// makes every plan stored under the old value unreachable, so the matrix is re-tuned:
//   - device_signature names the GPU model, compute capability, SM count, memory, and the
//     driver, CUDA runtime and cuSPARSE versions (core/device_info.cpp): upgrading any of them
//     re-tunes; daemons on identical GPUs and software share plans;
//   - tuner_version (tuner/tuner.hpp kTunerVersion) changes when what the tuner measures or
//     how it chooses changes;
//   - model_version (models/model_set.hpp kModelVersion) changes when the performance models
//     change, since they decide which candidates are measured at all.
// Unreachable rows stay until erase_all_for_device or an operator deletes them.

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
  std::uint32_t model_version = 0;

  friend bool operator==(const PlanKey&, const PlanKey&) = default;
};

// For logs: "fingerprint=0123...ef device='gpu|...' precision=fp64 tuner_version=3
// model_version=12".
std::string to_string(const PlanKey& key);

// Inverse of Fingerprint::hex() (32 hex digits, high word first); nullopt for anything else.
// Stores keep the fingerprint as text so that a person can read and query it.
std::optional<Fingerprint> fingerprint_from_hex(std::string_view hex) noexcept;

}  // namespace spmvd
