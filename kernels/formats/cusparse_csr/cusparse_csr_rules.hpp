#pragma once
// cuSPARSE generic SpMV on a CSR descriptor: the baseline every other format is compared
// against. The candidates are cuSPARSE's CSR algorithms (params.library_algorithm holds
// the cusparseSpMVAlg_t value); cuSPARSE picks its own launch configuration, so launch is {}.

#include <cstdint>
#include <tuple>

#include "kernels/build_source.hpp"
#include "kernels/format_rules.hpp"

namespace spmvd {

inline constexpr FormatId kCusparseCsrFormatId{3};

// cusparseSpMVAlg_t values (cusparse.h; checked by static_assert where cuSPARSE is included).
inline constexpr std::uint32_t kCusparseSpmvCsrAlg1 = 2;
inline constexpr std::uint32_t kCusparseSpmvCsrAlg2 = 3;

// cusparse_csr's parameters (Candidate::params holds FieldSet::of(them)).
struct CusparseCsrParams {
  std::uint32_t library_algorithm = 0;  // cusparseSpMVAlg_t value
  static constexpr auto kFields =
      std::tuple{declare_field("library_algorithm", &CusparseCsrParams::library_algorithm)};
  friend bool operator==(const CusparseCsrParams&, const CusparseCsrParams&) = default;
};

class CusparseCsrRules final : public FormatRules {
 public:
  FormatId id() const noexcept override { return kCusparseCsrFormatId; }
  std::string_view name() const noexcept override { return "cusparse_csr"; }
  bool needs_gpu() const noexcept override { return true; }
  // no dedicated model: the bytes model, fitted on this format's own samples.
  std::string_view model_family() const noexcept override { return "bytes"; }

  bool admissible(const MatrixFeatures& features, const DeviceInfo& device, Precision precision,
                  std::uint64_t memory_budget_bytes) const override;
  // CUSPARSE_SPMV_CSR_ALG1 and CUSPARSE_SPMV_CSR_ALG2.
  std::vector<Candidate> candidates(const MatrixFeatures& features,
                                    const DeviceInfo& device) const override;
  // Offsets and column indices (32-bit when nnz < 2^31, else 64-bit for both, as cuSPARSE wants
  // one index type), values, plus an upper bound on the SpMV workspace, whose exact size only
  // cusparseSpMV_bufferSize knows (the built operator reports the exact total).
  std::uint64_t device_bytes(const MatrixFeatures& features, Precision precision,
                             const Candidate& candidate) const override;
  // device_bytes without the workspace bound (a guess on the safe side, not bytes it reads).
  std::uint64_t dram_streamed_bytes(const MatrixFeatures& features, Precision precision,
                                    const Candidate& candidate) const override;

  // Bytes of one row offset / column index: 4 when nnz < 2^31, else 8.
  static std::uint64_t index_bytes(std::int64_t nnz) noexcept;
  // The workspace bound used by device_bytes.
  static std::uint64_t workspace_bound_bytes(std::int64_t rows) noexcept;

  // Builds cusparse_csr (cusparse_csr_rules.hpp) on source.device(), a CUDA device, from the
  // source's device CSR in `precision` (shared, not copied): while nnz < 2^31 its columns and
  // values with its offsets narrowed to 32 bits on the device, else its offsets and values with
  // its columns widened to 64 bits on the device, the converted array made once per source
  // (common/csr_derived_arrays.hpp: ALG1 and ALG2 share it). Creates a cuSPARSE handle bound to
  // the device stream and the CSR descriptor, allocates the SpMV workspace once and runs
  // cusparseSpMV_preprocess once; apply() is one cusparseSpMV.
  // Throws Error(invalid_argument) for an algorithm other than CSR ALG1/ALG2,
  // Error(failed_precondition) on a CPU device, Error(resource_exhausted) when memory runs out.
  static std::unique_ptr<SpmvOperator> build(const BuildSource& source, Precision precision,
                                             const Candidate& candidate);

  // The candidate's CusparseCsrParams; throws Error(invalid_argument) naming the field a stored
  // plan lacks.
  static CusparseCsrParams params_of(const Candidate& candidate) {
    return candidate.params.as<CusparseCsrParams>("cusparse_csr");
  }
};

}  // namespace spmvd
