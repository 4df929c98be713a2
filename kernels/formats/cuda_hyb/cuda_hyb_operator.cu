#include <algorithm>
#include <memory>
#include <string>
#include <utility>

#include "core/error.hpp"
#include "kernels/cuda/cuda_check.cuh"
#include "kernels/formats/common/builder_checks.hpp"
#include "kernels/formats/common/sell_layout.hpp"
#include "kernels/formats/common/segmented_coo_kernel.cuh"
#include "kernels/formats/common/spmv_device.cuh"
#include "kernels/formats/cuda_csr_vector/cuda_csr_vector_rules.hpp"
#include "kernels/formats/cuda_hyb/cuda_hyb_rules.hpp"
#include "kernels/formats/cuda_hyb/device_hyb_layout.hpp"

namespace spmvd {
namespace {

template <typename Value>
class CudaHybOperator final : public SpmvOperator {
 public:
  CudaHybOperator(std::shared_ptr<const DeviceHybLayout> hyb, const LaunchConfig& launch,
                  Device& device)
      : hyb_(std::move(hyb)),
        launch_(launch),
        // The ELL part's grid: one wave of resident blocks, as for cuda_ell.
        ell_grid_size_(
            CudaCsrVectorRules::grid_size(hyb_->rows, 1, launch.block_size, device.info())),
        stream_(static_cast<cudaStream_t>(device.native_stream())) {}

  void apply(const void* x_raw, void* y_raw, double alpha, double beta) override {
    if (hyb_->rows == 0) return;
    const auto* x = static_cast<const Value*>(x_raw);
    auto* y = static_cast<Value*>(y_raw);
    // Every row passes through the ELL kernel (width 0 included): it applies beta for the COO
    // pass, which only adds.
    catalogue_detail::ell_kernel<Value><<<ell_grid_size_, launch_.block_size, 0, stream_>>>(
        hyb_->rows, hyb_->ell_width, hyb_->ell_col_indices.as<const std::int32_t>(),
        hyb_->ell_values.as<const Value>(), x, y, static_cast<Value>(alpha),
        static_cast<Value>(beta));
    SPMVD_CUDA_CHECK_LAUNCH();
    catalogue_detail::launch_coo_segmented(
        hyb_->coo_nnz, hyb_->coo_row_indices.as<const std::int32_t>(),
        hyb_->coo_col_indices.as<const std::int32_t>(), hyb_->coo_values.as<const Value>(), x, y,
        static_cast<Value>(alpha), launch_.grid_size, launch_.block_size, stream_);
  }

  Precision precision() const noexcept override { return precision_of<Value>(); }
  std::size_t device_bytes() const noexcept override { return hyb_->bytes(); }

 private:
  std::shared_ptr<const DeviceHybLayout> hyb_;  // shared with every launch configuration of K
  LaunchConfig launch_;
  std::uint32_t ell_grid_size_;
  cudaStream_t stream_;
};

}  // namespace

std::unique_ptr<SpmvOperator> CudaHybRules::build(const BuildSource& source, Precision precision,
                                                  const Candidate& candidate) {
  check_candidate_format("cuda_hyb", kCudaHybFormatId, candidate);
  const CudaHybParams params = params_of(candidate);
  check_one_of("cuda_hyb", "block_size", candidate.launch.block_size, kHybBlockSizes);
  if (candidate.launch.grid_size == 0) throw_invalid("cuda_hyb: grid_size is 0");
  Device& device = source.device();
  check_gpu_device("cuda_hyb", device);
  const CsrMatrix<double>& matrix = source.host();
  const std::int64_t longest = longest_row(matrix);
  // A wider ELL part than the longest row would be pure padding.
  if (params.ell_width > longest)
    throw_invalid("cuda_hyb: ell_width " + std::to_string(params.ell_width) +
                  " exceeds the matrix's longest row, " + std::to_string(longest));
  auto hyb = shared_device_hyb_layout(source, precision, params.ell_width);
  if (precision == Precision::fp32)
    return std::make_unique<CudaHybOperator<float>>(std::move(hyb), candidate.launch, device);
  return std::make_unique<CudaHybOperator<double>>(std::move(hyb), candidate.launch, device);
}

}  // namespace spmvd
