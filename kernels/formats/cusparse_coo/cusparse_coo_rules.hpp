#pragma once
// cuSPARSE generic SpMV on a COO descriptor (32-bit row and column indices). The candidates are
// cuSPARSE's COO algorithms (params.library_algorithm = cusparseSpMVAlg_t value);
// cuSPARSE picks its own launch configuration, so launch is {}.

#include <cstdint>
#include <tuple>

#include "kernels/build_source.hpp"
#include "kernels/format_rules.hpp"

namespace spmvd {

inline constexpr FormatId kCusparseCooFormatId{9};

// cusparseSpMVAlg_t values (cusparse.h; checked by static_assert in the operator).
inline constexpr std::uint32_t kCusparseSpmvCooAlg1 = 1;
inline constexpr std::uint32_t kCusparseSpmvCooAlg2 = 4;  // deterministic, needs a workspace

// cusparse_coo's parameters (Candidate::params holds FieldSet::of(them)).
struct CusparseCooParams {
  std::uint32_t library_algorithm = 0;  // cusparseSpMVAlg_t value
  static constexpr auto kFields =
      std::tuple{declare_field("library_algorithm", &CusparseCooParams::library_algorithm)};
  friend bool operator==(const CusparseCooParams&, const CusparseCooParams&) = default;
};

class CusparseCooRules final : public FormatRules {
 public:
  FormatId id() const noexcept override { return kCusparseCooFormatId; }
  std::string_view name() const noexcept override { return "cusparse_coo"; }
  bool needs_gpu() const noexcept override { return true; }
  // no dedicated model: the bytes model, fitted on this format's own samples.
  std::string_view model_family() const noexcept override { return "bytes"; }

  // On a GPU, nnz < 2^31 (32-bit indices), within the budget.
  bool admissible(const MatrixFeatures& features, const DeviceInfo& device, Precision precision,
                  std::uint64_t memory_budget_bytes) const override;
  // CUSPARSE_SPMV_COO_ALG1 and CUSPARSE_SPMV_COO_ALG2.
  std::vector<Candidate> candidates(const MatrixFeatures& features,
                                    const DeviceInfo& device) const override;
  // nnz * (row index + column index + value) + CusparseCsrRules::workspace_bound_bytes.
  std::uint64_t device_bytes(const MatrixFeatures& features, Precision precision,
                             const Candidate& candidate) const override;
  // device_bytes without the workspace bound (a guess on the safe side, not bytes it reads).
  std::uint64_t dram_streamed_bytes(const MatrixFeatures& features, Precision precision,
                                    const Candidate& candidate) const override;

  // Builds cusparse_coo (cusparse_coo_rules.hpp) on source.device(), a CUDA device: the COO
  // arrays are the source's device CSR columns and values (shared, not copied) and 32-bit row
  // indices expanded from its offsets on the device, once per source
  // (common/csr_derived_arrays.hpp); a cuSPARSE handle on the device stream, the COO descriptor
  // and the SpMV workspace are created once; apply() is one cusparseSpMV.
  // Throws Error(invalid_argument) for a candidate of another format or an algorithm other than
  // COO ALG1/ALG2, nnz >= 2^31; Error(failed_precondition) on a CPU device;
  // Error(resource_exhausted) when device memory runs out.
  static std::unique_ptr<SpmvOperator> build(const BuildSource& source, Precision precision,
                                             const Candidate& candidate);

  // The candidate's CusparseCooParams; throws Error(invalid_argument) naming the field a stored
  // plan lacks.
  static CusparseCooParams params_of(const Candidate& candidate) {
    return candidate.params.as<CusparseCooParams>("cusparse_coo");
  }
};

}  // namespace spmvd
