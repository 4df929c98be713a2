#pragma once
// The pure-C++ side of a storage format (STYLE.md: MIOpen's IsApplicable / default config /
// IsValidPerformanceConfig). Decisions are functions of (features, device info) alone: no
// rule queries the GPU, so every rule is unit-tested with a hand-written DeviceInfo.

#include <cstdint>
#include <string_view>
#include <vector>

#include "core/device_info.hpp"
#include "core/format_id.hpp"
#include "core/matrix_features.hpp"
#include "core/precision.hpp"
#include "kernels/candidate.hpp"

namespace spmvd {

class FormatRules {
 public:
  virtual ~FormatRules() = default;
  virtual FormatId id() const noexcept = 0;
  virtual std::string_view name() const noexcept = 0;  // stable, snake_case: "cuda_csr_vector"
  virtual bool needs_gpu() const noexcept = 0;

  // Can this format hold the matrix on this device within memory_budget_bytes?
  virtual bool admissible(const MatrixFeatures& features, const DeviceInfo& device,
                          Precision precision, std::uint64_t memory_budget_bytes) const = 0;
  // The launch-parameter space to sweep: concrete candidates only (this format's id in each).
  virtual std::vector<Candidate> candidates(const MatrixFeatures& features,
                                            const DeviceInfo& device) const = 0;
  // Bytes the built format occupies on the device (padding included).
  virtual std::uint64_t device_bytes(const MatrixFeatures& features, Precision precision,
                                     const Candidate& candidate) const = 0;
  // Is a candidate read back from the plan cache still one this format would run? The
  // default: it must be one of candidates(features, device).
  virtual bool is_valid(const Candidate& candidate, const MatrixFeatures& features,
                        const DeviceInfo& device) const;
};

}  // namespace spmvd
