#include <array>
#include <optional>
#include <string>

#include "core/error.hpp"
#include "kernels/cuda/cuda_check.cuh"
#include "kernels/device_lock.hpp"
#include "kernels/cuda/host_log.hpp"
#include "kernels/formats/common/builder_checks.hpp"
#include "kernels/formats/common/cusparse_spmv.cuh"
#include "kernels/formats/common/spmv_device.cuh"
#include "kernels/formats/cusparse_bsr/bsr_layout.hpp"
#include "kernels/formats/cusparse_bsr/cusparse_bsr_rules.hpp"

namespace spmvd {

static_assert(kCusparseSpmvBsrAlg1 == CUSPARSE_SPMV_BSR_ALG1, "cusparse_bsr_rules.hpp is stale");

namespace {

template <typename Value>
class CusparseBsrOperator final : public SpmvOperator {
 public:
  CusparseBsrOperator(const BsrLayout<Value>& bsr, std::int64_t rows, std::int64_t cols,
                      std::int64_t nnz, Device& device)
      : rows_(rows),
        cols_(cols),
        stream_(static_cast<cudaStream_t>(device.native_stream())),
        row_offsets_(upload(device, bsr.row_offsets.data(), bsr.row_offsets.size())),
        col_indices_(upload(device, bsr.col_indices.data(), bsr.col_indices.size())),
        values_(upload(device, bsr.values.data(), bsr.values.size())) {
    // Shapes without work are not handed to cuSPARSE: y = beta*y is all there is.
    if (rows == 0 || cols == 0 || nnz == 0) return;
    const std::int64_t padded_rows = bsr.block_rows * bsr.block_dim;
    const std::int64_t padded_cols = bsr.block_cols * bsr.block_dim;
    if (padded_rows != rows || padded_cols != cols) {
      x_stage_ = DeviceBuffer(device, static_cast<std::size_t>(padded_cols) * sizeof(Value));
      y_stage_ = DeviceBuffer(device, static_cast<std::size_t>(padded_rows) * sizeof(Value));
      // The padding columns of x meet only the zero fill-in of the edge blocks, but 0 * NaN is
      // NaN: keep them 0 (apply() overwrites only the first cols entries).
      device.fill_bytes(x_stage_.data(), 0, x_stage_.bytes());
      device.fill_bytes(y_stage_.data(), 0, y_stage_.bytes());
    }
    cusparseSpMatDescr_t descr = nullptr;
    SPMVD_CUSPARSE_CHECK(
        cusparseCreateBsr(&descr, bsr.block_rows, bsr.block_cols, bsr.blocks(), bsr.block_dim,
                          bsr.block_dim, row_offsets_.data(), col_indices_.data(), values_.data(),
                          CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO,
                          catalogue_detail::cuda_value_type<Value>(), CUSPARSE_ORDER_ROW));
    spmv_.emplace(device, catalogue_detail::CusparseSpMatPtr(descr), padded_cols, padded_rows,
                  catalogue_detail::cuda_value_type<Value>(), CUSPARSE_SPMV_BSR_ALG1);
    device.synchronize();  // the stage fills are done before the first apply()
  }

  void apply(const void* x, void* y, double alpha_in, double beta_in) override {
    const auto alpha = static_cast<Value>(alpha_in), beta = static_cast<Value>(beta_in);
    if (!spmv_) return catalogue_detail::launch_scale(rows_, static_cast<Value*>(y), beta, stream_);
    if (!x_stage_.data()) return spmv_->run(x, y, &alpha, &beta);
    SPMVD_CUDA_CHECK(cudaMemcpyAsync(x_stage_.data(), x,
                                     static_cast<std::size_t>(cols_) * sizeof(Value),
                                     cudaMemcpyDeviceToDevice, stream_));
    // beta == 0: y is write-only and may hold NaN; the stage holds finite values from earlier
    // calls, so skipping the copy keeps NaN out whether or not cuSPARSE reads y then.
    if (beta != Value(0))
      SPMVD_CUDA_CHECK(cudaMemcpyAsync(y_stage_.data(), y,
                                       static_cast<std::size_t>(rows_) * sizeof(Value),
                                       cudaMemcpyDeviceToDevice, stream_));
    spmv_->run(x_stage_.data(), y_stage_.data(), &alpha, &beta);
    SPMVD_CUDA_CHECK(cudaMemcpyAsync(y, y_stage_.data(),
                                     static_cast<std::size_t>(rows_) * sizeof(Value),
                                     cudaMemcpyDeviceToDevice, stream_));
  }

  Precision precision() const noexcept override { return precision_of<Value>(); }
  std::size_t device_bytes() const noexcept override {
    return row_offsets_.bytes() + col_indices_.bytes() + values_.bytes() + x_stage_.bytes() +
           y_stage_.bytes() + (spmv_ ? spmv_->workspace_bytes() : 0);
  }

 private:
  std::int64_t rows_;
  std::int64_t cols_;
  cudaStream_t stream_;
  DeviceBuffer row_offsets_;
  DeviceBuffer col_indices_;
  DeviceBuffer values_;
  DeviceBuffer x_stage_;  // padded copies of x and y; empty when the shape is whole blocks
  DeviceBuffer y_stage_;
  std::optional<catalogue_detail::CusparseSpmv> spmv_;  // declared last: destroyed first
};

template <typename Value>
std::unique_ptr<SpmvOperator> build_as(const CsrMatrix<double>& matrix, std::int64_t block_dim,
                                       Device& device) {
  const BsrLayout<Value> bsr =
      without_device_lock([&] { return make_bsr_layout<Value>(matrix, block_dim); });
  const std::int64_t slots = bsr.blocks() * block_dim * block_dim;
  // The rules could only apply a necessary condition for the fill-in rule (cusparse_bsr_rules.hpp);
  // say when the real fill-in breaks it, so a tuner log shows why BSR lost.
  if (matrix.nnz() > 0 && slots >= kBsrMaxFillRatio * matrix.nnz())
    cuda_detail::log_debug("cusparse_bsr: block_dim " + std::to_string(block_dim) + " stores " +
                           std::to_string(slots) + " slots for " + std::to_string(matrix.nnz()) +
                           " non-zeros, beyond the fill-in rule's " +
                           std::to_string(kBsrMaxFillRatio) + "x");
  return std::make_unique<CusparseBsrOperator<Value>>(bsr, matrix.rows, matrix.cols, matrix.nnz(),
                                                      device);
}

}  // namespace

std::unique_ptr<SpmvOperator> CusparseBsrRules::build(const CsrMatrix<double>& matrix,
                                                      Precision precision,
                                                      const Candidate& candidate, Device& device) {
  check_candidate_format("cusparse_bsr", kCusparseBsrFormatId, candidate);
  const CusparseBsrParams params = params_of(candidate);
  check_one_of("cusparse_bsr", "block_dim", params.block_dim, kBsrBlockDims);
  constexpr std::array<std::uint32_t, 1> algorithms{kCusparseSpmvBsrAlg1};
  check_one_of("cusparse_bsr", "library_algorithm", params.library_algorithm, algorithms);
  check_gpu_device("cusparse_bsr", device);
  if (precision == Precision::fp32) return build_as<float>(matrix, params.block_dim, device);
  return build_as<double>(matrix, params.block_dim, device);
}

}  // namespace spmvd
