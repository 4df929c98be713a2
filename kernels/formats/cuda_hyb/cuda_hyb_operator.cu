#include <algorithm>
#include <string>

#include "core/error.hpp"
#include "kernels/cuda/cuda_check.cuh"
#include "kernels/formats/common/builder_checks.hpp"
#include "kernels/formats/common/segmented_coo_kernel.cuh"
#include "kernels/formats/common/spmv_device.cuh"
#include "kernels/formats/cuda_csr_vector/cuda_csr_vector_rules.hpp"
#include "kernels/formats/cuda_hyb/cuda_hyb_rules.hpp"
#include "kernels/formats/cuda_hyb/hyb_layout.hpp"

namespace spmvd {
namespace {

template <typename Value>
class CudaHybOperator final : public SpmvOperator {
 public:
  CudaHybOperator(const HybLayout<Value>& hyb, const LaunchConfig& launch, Device& device)
      : rows_(hyb.rows),
        ell_width_(hyb.ell_width),
        coo_nnz_(static_cast<std::int64_t>(hyb.coo.values.size())),
        launch_(launch),
        // The ELL part's grid: one wave of resident blocks, as for cuda_ell.
        ell_grid_size_(
            CudaCsrVectorRules::grid_size(hyb.rows, 1, launch.block_size, device.info())),
        stream_(static_cast<cudaStream_t>(device.native_stream())),
        ell_col_indices_(upload(device, hyb.ell_col_indices.data(), hyb.ell_col_indices.size())),
        ell_values_(upload(device, hyb.ell_values.data(), hyb.ell_values.size())),
        coo_row_indices_(upload(device, hyb.coo.row_indices.data(), hyb.coo.row_indices.size())),
        coo_col_indices_(upload(device, hyb.coo.col_indices.data(), hyb.coo.col_indices.size())),
        coo_values_(upload(device, hyb.coo.values.data(), hyb.coo.values.size())) {}

  void apply(const void* x_raw, void* y_raw, double alpha, double beta) override {
    if (rows_ == 0) return;
    const auto* x = static_cast<const Value*>(x_raw);
    auto* y = static_cast<Value*>(y_raw);
    // Every row passes through the ELL kernel (width 0 included): it applies beta for the COO
    // pass, which only adds.
    catalogue_detail::ell_kernel<Value><<<ell_grid_size_, launch_.block_size, 0, stream_>>>(
        rows_, ell_width_, ell_col_indices_.as<const std::int32_t>(), ell_values_.as<const Value>(),
        x, y, static_cast<Value>(alpha), static_cast<Value>(beta));
    SPMVD_CUDA_CHECK_LAUNCH();
    catalogue_detail::launch_coo_segmented(
        coo_nnz_, coo_row_indices_.as<const std::int32_t>(),
        coo_col_indices_.as<const std::int32_t>(), coo_values_.as<const Value>(), x, y,
        static_cast<Value>(alpha), launch_.grid_size, launch_.block_size, stream_);
  }

  Precision precision() const noexcept override { return precision_of<Value>(); }
  std::size_t device_bytes() const noexcept override {
    return ell_col_indices_.bytes() + ell_values_.bytes() + coo_row_indices_.bytes() +
           coo_col_indices_.bytes() + coo_values_.bytes();
  }

 private:
  std::int64_t rows_;
  std::int64_t ell_width_;
  std::int64_t coo_nnz_;
  LaunchConfig launch_;
  std::uint32_t ell_grid_size_;
  cudaStream_t stream_;
  DeviceBuffer ell_col_indices_;
  DeviceBuffer ell_values_;
  DeviceBuffer coo_row_indices_;
  DeviceBuffer coo_col_indices_;
  DeviceBuffer coo_values_;
};

}  // namespace

std::unique_ptr<SpmvOperator> CudaHybRules::build(const CsrMatrix<double>& matrix,
                                                  Precision precision, const Candidate& candidate,
                                                  Device& device) {
  check_candidate_format("cuda_hyb", kCudaHybFormatId, candidate);
  const CudaHybParams params = params_of(candidate);
  check_one_of("cuda_hyb", "block_size", candidate.launch.block_size, kHybBlockSizes);
  if (candidate.launch.grid_size == 0) throw_invalid("cuda_hyb: grid_size is 0");
  check_gpu_device("cuda_hyb", device);
  std::int64_t longest = 0;
  for (std::int64_t r = 0; r < matrix.rows; ++r) longest = std::max(longest, matrix.row_length(r));
  // A wider ELL part than the longest row would be pure padding.
  if (params.ell_width > longest)
    throw_invalid("cuda_hyb: ell_width " + std::to_string(params.ell_width) +
                  " exceeds the matrix's longest row, " + std::to_string(longest));
  if (precision == Precision::fp32)
    return std::make_unique<CudaHybOperator<float>>(
        make_hyb_layout<float>(matrix, params.ell_width), candidate.launch, device);
  return std::make_unique<CudaHybOperator<double>>(
      make_hyb_layout<double>(matrix, params.ell_width), candidate.launch, device);
}

}  // namespace spmvd
