#pragma once
// CSR on the host, multiplied with oneTBB: the backend when no GPU is present. One candidate
// (no launch parameters): TBB chooses the row ranges.

#include "kernels/build_source.hpp"
#include "kernels/format_rules.hpp"

namespace spmvd {

inline constexpr FormatId kCpuCsrFormatId{1};

class CpuCsrRules final : public FormatRules {
 public:
  FormatId id() const noexcept override { return kCpuCsrFormatId; }
  std::string_view name() const noexcept override { return "cpu_csr"; }
  bool needs_gpu() const noexcept override { return false; }
  // no dedicated model: the bytes model, fitted on cpu_csr itself.
  std::string_view model_family() const noexcept override { return "bytes"; }

  // Only on a CPU device (x and y must be host memory), within the budget.
  bool admissible(const MatrixFeatures& features, const DeviceInfo& device, Precision precision,
                  std::uint64_t memory_budget_bytes) const override;
  std::vector<Candidate> candidates(const MatrixFeatures& features,
                                    const DeviceInfo& device) const override;
  // (rows + 1) 64-bit offsets + nnz 32-bit column indices + nnz values.
  std::uint64_t device_bytes(const MatrixFeatures& features, Precision precision,
                             const Candidate& candidate) const override;

  // Builds cpu_csr (kernels/formats/cpu_csr/cpu_csr_rules.hpp) on source.device(), a CPU device:
  // its arrays are the source's CSR in the device's (host) memory in `precision`
  // (source.device_csr), shared, not copied; apply() runs y = alpha*A*x + beta*y with oneTBB,
  // synchronously, on the calling thread and TBB's workers.
  // Throws Error(failed_precondition) on a GPU device, Error(invalid_argument) for a candidate of
  // another format.
  static std::unique_ptr<SpmvOperator> build(const BuildSource& source, Precision precision,
                                             const Candidate& candidate);
};

}  // namespace spmvd
