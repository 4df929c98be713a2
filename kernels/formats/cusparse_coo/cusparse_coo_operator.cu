#include <array>
#include <optional>
#include <string>

#include "core/error.hpp"
#include "kernels/cuda/cuda_check.cuh"
#include "kernels/formats/common/builder_checks.hpp"
#include "kernels/formats/common/coo_layout.hpp"
#include "kernels/formats/common/cusparse_spmv.cuh"
#include "kernels/formats/common/spmv_device.cuh"
#include "kernels/formats/cusparse_coo/cusparse_coo_operator.hpp"
#include "kernels/formats/cusparse_coo/cusparse_coo_rules.hpp"

namespace spmvd {

static_assert(kCusparseSpmvCooAlg1 == CUSPARSE_SPMV_COO_ALG1, "cusparse_coo_rules.hpp is stale");
static_assert(kCusparseSpmvCooAlg2 == CUSPARSE_SPMV_COO_ALG2, "cusparse_coo_rules.hpp is stale");

namespace {

template <typename Value>
class CusparseCooOperator final : public SpmvOperator {
 public:
  CusparseCooOperator(const CsrMatrix<double>& m, cusparseSpMVAlg_t algorithm, Device& device)
      : rows_(m.rows), stream_(static_cast<cudaStream_t>(device.native_stream())) {
    const CooLayout<Value> coo = make_coo_layout<Value>(m);
    row_indices_ = upload(device, coo.row_indices.data(), coo.row_indices.size());
    col_indices_ = upload(device, coo.col_indices.data(), coo.col_indices.size());
    values_ = upload(device, coo.values.data(), coo.values.size());
    // Shapes without work are not handed to cuSPARSE: y = beta*y is all there is.
    if (m.rows == 0 || m.cols == 0 || m.nnz() == 0) return;
    cusparseSpMatDescr_t descr = nullptr;
    SPMVD_CUSPARSE_CHECK(cusparseCreateCoo(
        &descr, m.rows, m.cols, m.nnz(), row_indices_.data(), col_indices_.data(), values_.data(),
        CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, catalogue_detail::cuda_value_type<Value>()));
    spmv_.emplace(device, catalogue_detail::CusparseSpMatPtr(descr), m.cols, m.rows,
                  catalogue_detail::cuda_value_type<Value>(), algorithm);
  }

  void apply(const void* x, void* y, double alpha_in, double beta_in) override {
    const auto alpha = static_cast<Value>(alpha_in), beta = static_cast<Value>(beta_in);
    if (!spmv_) return catalogue_detail::launch_scale(rows_, static_cast<Value*>(y), beta, stream_);
    spmv_->run(x, y, &alpha, &beta);
  }

  Precision precision() const noexcept override { return precision_of<Value>(); }
  std::size_t device_bytes() const noexcept override {
    return row_indices_.bytes() + col_indices_.bytes() + values_.bytes() +
           (spmv_ ? spmv_->workspace_bytes() : 0);
  }

 private:
  std::int64_t rows_;
  cudaStream_t stream_;
  DeviceBuffer row_indices_;
  DeviceBuffer col_indices_;
  DeviceBuffer values_;
  std::optional<catalogue_detail::CusparseSpmv> spmv_;  // declared last: destroyed first
};

}  // namespace

std::unique_ptr<SpmvOperator> build_cusparse_coo(const CsrMatrix<double>& matrix,
                                                 Precision precision, const Candidate& candidate,
                                                 Device& device) {
  check_candidate_format("cusparse_coo", kCusparseCooFormatId, candidate);
  constexpr std::array<std::uint32_t, 2> algorithms{kCusparseSpmvCooAlg1, kCusparseSpmvCooAlg2};
  check_one_of("cusparse_coo", "library_algorithm", candidate.params.library_algorithm, algorithms);
  if (matrix.nnz() > kMaxDimension)
    throw_invalid("cusparse_coo: " + std::to_string(matrix.nnz()) +
                  " entries exceed the 32-bit COO indices");
  check_gpu_device("cusparse_coo", device);
  const auto algorithm = static_cast<cusparseSpMVAlg_t>(candidate.params.library_algorithm);
  if (precision == Precision::fp32)
    return std::make_unique<CusparseCooOperator<float>>(matrix, algorithm, device);
  return std::make_unique<CusparseCooOperator<double>>(matrix, algorithm, device);
}

}  // namespace spmvd
