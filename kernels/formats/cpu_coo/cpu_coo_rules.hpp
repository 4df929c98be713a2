#pragma once
// COO on the host, multiplied with oneTBB: the entries sorted by row, each task owning a range
// of rows (found by binary search in the row indices), so no two tasks write the same y entry
// and no atomics are needed. The CPU half of a CPU-GPU split (paper 003, Alg. 2). One candidate
// (no launch parameters): TBB chooses the ranges.

#include "kernels/format_rules.hpp"

namespace spmvd {

inline constexpr FormatId kCpuCooFormatId{12};

class CpuCooRules final : public FormatRules {
 public:
  FormatId id() const noexcept override { return kCpuCooFormatId; }
  std::string_view name() const noexcept override { return "cpu_coo"; }
  bool needs_gpu() const noexcept override { return false; }
  // paper 004's COO line, fitted on cpu_coo when calibrating the CPU device.
  std::string_view model_family() const noexcept override { return "coo"; }

  // Only on a CPU device (x and y must be host memory), within the budget.
  bool admissible(const MatrixFeatures& features, const DeviceInfo& device, Precision precision,
                  std::uint64_t memory_budget_bytes) const override;
  std::vector<Candidate> candidates(const MatrixFeatures& features,
                                    const DeviceInfo& device) const override;
  // nnz * (32-bit row index + 32-bit column index + value).
  std::uint64_t device_bytes(const MatrixFeatures& features, Precision precision,
                             const Candidate& candidate) const override;

  // Builds cpu_coo (cpu_coo_rules.hpp) on a CPU device: the COO arrays (common/coo_layout.hpp)
  // copied into the device's (host) memory; apply() runs y = alpha*A*x + beta*y with oneTBB,
  // synchronously, each task owning a row range.
  // Throws Error(failed_precondition) on a GPU device, Error(invalid_argument) for a candidate of
  // another format.
  static std::unique_ptr<SpmvOperator> build(const CsrMatrix<double>& matrix, Precision precision,
                                             const Candidate& candidate, Device& device);
};

}  // namespace spmvd
