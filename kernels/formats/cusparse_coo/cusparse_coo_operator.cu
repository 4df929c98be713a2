#include <array>
#include <memory>
#include <string>
#include <utility>

#include "core/error.hpp"
#include "kernels/cuda/cuda_check.cuh"
#include "kernels/formats/common/builder_checks.hpp"
#include "kernels/formats/common/csr_derived_arrays.hpp"
#include "kernels/formats/common/cusparse_spmv.cuh"
#include "kernels/formats/cusparse_coo/cusparse_coo_rules.hpp"

namespace spmvd {

static_assert(kCusparseSpmvCooAlg1 == CUSPARSE_SPMV_COO_ALG1, "cusparse_coo_rules.hpp is stale");
static_assert(kCusparseSpmvCooAlg2 == CUSPARSE_SPMV_COO_ALG2, "cusparse_coo_rules.hpp is stale");

namespace {

template <typename Value>
class CusparseCooOperator final : public catalogue_detail::CusparseOperator<Value> {
 public:
  // COO in CSR order: the CSR's own columns and values, and row indices expanded from its
  // offsets on the device (shared with cuda_coo and the other algorithm's candidate).
  CusparseCooOperator(const CsrMatrix<double>& m, std::shared_ptr<const DeviceCsrArrays> csr,
                      std::shared_ptr<const DeviceBuffer> row_indices, cusparseSpMVAlg_t algorithm,
                      Device& device)
      : catalogue_detail::CusparseOperator<Value>(m, device) {
    void* rows = row_indices->data();
    void* cols = csr->col_indices.data();
    void* values = csr->values.data();
    this->hold(row_indices, row_indices->bytes());
    this->hold(csr, csr->col_indices.bytes() + csr->values.bytes());
    if (!this->has_work(m)) return;
    cusparseSpMatDescr_t descr = nullptr;
    SPMVD_CUSPARSE_CHECK(cusparseCreateCoo(&descr, m.rows, m.cols, m.nnz(), rows, cols, values,
                                           CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO,
                                           catalogue_detail::cuda_value_type<Value>()));
    this->start(device, descr, algorithm);
  }
};

}  // namespace

std::unique_ptr<SpmvOperator> CusparseCooRules::build(const BuildSource& source,
                                                      Precision precision,
                                                      const Candidate& candidate) {
  check_candidate_format("cusparse_coo", kCusparseCooFormatId, candidate);
  const CusparseCooParams params = params_of(candidate);
  constexpr std::array<std::uint32_t, 2> algorithms{kCusparseSpmvCooAlg1, kCusparseSpmvCooAlg2};
  check_one_of("cusparse_coo", "library_algorithm", params.library_algorithm, algorithms);
  const CsrMatrix<double>& matrix = source.host();
  if (matrix.nnz() > kMaxDimension)
    throw_invalid("cusparse_coo: " + std::to_string(matrix.nnz()) +
                  " entries exceed the 32-bit COO indices");
  check_gpu_device("cusparse_coo", source.device());
  const auto algorithm = static_cast<cusparseSpMVAlg_t>(params.library_algorithm);
  std::shared_ptr<const DeviceCsrArrays> csr = source.device_csr(precision);
  std::shared_ptr<const DeviceBuffer> row_indices = shared_row_indices(source, *csr);
  if (precision == Precision::fp32)
    return std::make_unique<CusparseCooOperator<float>>(
        matrix, std::move(csr), std::move(row_indices), algorithm, source.device());
  return std::make_unique<CusparseCooOperator<double>>(
      matrix, std::move(csr), std::move(row_indices), algorithm, source.device());
}

}  // namespace spmvd
