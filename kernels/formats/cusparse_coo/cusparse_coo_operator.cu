#include <array>
#include <string>

#include "core/error.hpp"
#include "kernels/cuda/cuda_check.cuh"
#include "kernels/formats/common/builder_checks.hpp"
#include "kernels/formats/common/coo_layout.hpp"
#include "kernels/formats/common/cusparse_spmv.cuh"
#include "kernels/formats/cusparse_coo/cusparse_coo_rules.hpp"

namespace spmvd {

static_assert(kCusparseSpmvCooAlg1 == CUSPARSE_SPMV_COO_ALG1, "cusparse_coo_rules.hpp is stale");
static_assert(kCusparseSpmvCooAlg2 == CUSPARSE_SPMV_COO_ALG2, "cusparse_coo_rules.hpp is stale");

namespace {

template <typename Value>
class CusparseCooOperator final : public catalogue_detail::CusparseOperator<Value> {
 public:
  CusparseCooOperator(const CsrMatrix<double>& m, cusparseSpMVAlg_t algorithm, Device& device)
      : catalogue_detail::CusparseOperator<Value>(m, device) {
    const CooLayout<Value> coo = make_coo_layout<Value>(m);
    void* rows = this->keep(upload(device, coo.row_indices.data(), coo.row_indices.size()));
    void* cols = this->keep(upload(device, coo.col_indices.data(), coo.col_indices.size()));
    void* values = this->keep(upload(device, coo.values.data(), coo.values.size()));
    if (!this->has_work(m)) return;
    cusparseSpMatDescr_t descr = nullptr;
    SPMVD_CUSPARSE_CHECK(cusparseCreateCoo(&descr, m.rows, m.cols, m.nnz(), rows, cols, values,
                                           CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO,
                                           catalogue_detail::cuda_value_type<Value>()));
    this->start(device, descr, algorithm);
  }
};

}  // namespace

std::unique_ptr<SpmvOperator> CusparseCooRules::build(const CsrMatrix<double>& matrix,
                                                      Precision precision,
                                                      const Candidate& candidate, Device& device) {
  check_candidate_format("cusparse_coo", kCusparseCooFormatId, candidate);
  const CusparseCooParams params = params_of(candidate);
  constexpr std::array<std::uint32_t, 2> algorithms{kCusparseSpmvCooAlg1, kCusparseSpmvCooAlg2};
  check_one_of("cusparse_coo", "library_algorithm", params.library_algorithm, algorithms);
  if (matrix.nnz() > kMaxDimension)
    throw_invalid("cusparse_coo: " + std::to_string(matrix.nnz()) +
                  " entries exceed the 32-bit COO indices");
  check_gpu_device("cusparse_coo", device);
  const auto algorithm = static_cast<cusparseSpMVAlg_t>(params.library_algorithm);
  if (precision == Precision::fp32)
    return std::make_unique<CusparseCooOperator<float>>(matrix, algorithm, device);
  return std::make_unique<CusparseCooOperator<double>>(matrix, algorithm, device);
}

}  // namespace spmvd
