#pragma once
// cuSPARSE generic SpMV on a COO descriptor (32-bit row and column indices). The candidates are
// cuSPARSE's COO algorithms (FormatParams.library_algorithm = cusparseSpMVAlg_t value);
// cuSPARSE picks its own launch configuration, so launch is {}.

#include <cstdint>

#include "kernels/format_rules.hpp"

namespace spmvd {

inline constexpr FormatId kCusparseCooFormatId{9};

// cusparseSpMVAlg_t values (cusparse.h; checked by static_assert in the operator).
inline constexpr std::uint32_t kCusparseSpmvCooAlg1 = 1;
inline constexpr std::uint32_t kCusparseSpmvCooAlg2 = 4;  // deterministic, needs a workspace

class CusparseCooRules final : public FormatRules {
 public:
  FormatId id() const noexcept override { return kCusparseCooFormatId; }
  std::string_view name() const noexcept override { return "cusparse_coo"; }
  bool needs_gpu() const noexcept override { return true; }

  // On a GPU, nnz < 2^31 (32-bit indices), within the budget.
  bool admissible(const MatrixFeatures& features, const DeviceInfo& device, Precision precision,
                  std::uint64_t memory_budget_bytes) const override;
  // CUSPARSE_SPMV_COO_ALG1 and CUSPARSE_SPMV_COO_ALG2.
  std::vector<Candidate> candidates(const MatrixFeatures& features,
                                    const DeviceInfo& device) const override;
  // nnz * (row index + column index + value) + CusparseCsrRules::workspace_bound_bytes.
  std::uint64_t device_bytes(const MatrixFeatures& features, Precision precision,
                             const Candidate& candidate) const override;
};

}  // namespace spmvd
