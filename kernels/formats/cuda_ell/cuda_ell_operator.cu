#include <algorithm>
#include <memory>
#include <string>
#include <utility>

#include "core/error.hpp"
#include "kernels/cuda/cuda_check.cuh"
#include "kernels/formats/common/builder_checks.hpp"
#include "kernels/formats/common/device_sell.hpp"
#include "kernels/formats/common/spmv_device.cuh"
#include "kernels/formats/cuda_ell/cuda_ell_rules.hpp"

namespace spmvd {
namespace {

template <typename Value>
class CudaEllOperator final : public SpmvOperator {
 public:
  CudaEllOperator(std::shared_ptr<const DeviceSellLayout> ell, const LaunchConfig& launch,
                  Device& device)
      : ell_(std::move(ell)),
        width_(ell_->width()),
        launch_(launch),
        stream_(static_cast<cudaStream_t>(device.native_stream())) {}

  void apply(const void* x, void* y, double alpha, double beta) override {
    if (ell_->rows == 0) return;
    catalogue_detail::ell_kernel<Value><<<launch_.grid_size, launch_.block_size, 0, stream_>>>(
        ell_->rows, width_, ell_->col_indices.as<const std::int32_t>(),
        ell_->values.as<const Value>(), static_cast<const Value*>(x), static_cast<Value*>(y),
        static_cast<Value>(alpha), static_cast<Value>(beta));
    SPMVD_CUDA_CHECK_LAUNCH();
  }

  Precision precision() const noexcept override { return precision_of<Value>(); }
  // The arrays the kernel reads (the one slice's two offsets are not among them).
  std::size_t device_bytes() const noexcept override {
    return ell_->col_indices.bytes() + ell_->values.bytes();
  }

 private:
  std::shared_ptr<const DeviceSellLayout> ell_;  // shared with every block size
  std::int64_t width_;
  LaunchConfig launch_;
  cudaStream_t stream_;
};

}  // namespace

std::unique_ptr<SpmvOperator> CudaEllRules::build(const BuildSource& source, Precision precision,
                                                  const Candidate& candidate) {
  check_candidate_format("cuda_ell", kCudaEllFormatId, candidate);
  check_one_of("cuda_ell", "block_size", candidate.launch.block_size, kEllBlockSizes);
  if (candidate.launch.grid_size == 0) throw_invalid("cuda_ell: grid_size is 0");
  Device& device = source.device();
  check_gpu_device("cuda_ell", device);
  const CsrMatrix<double>& matrix = source.host();
  // ELL is SELL of one slice holding every row, unsorted (ell_layout.hpp): its width is the
  // longest row, which the layout finds (shared by every block size).
  auto ell =
      shared_device_sell_layout(source, precision, std::max<std::int64_t>(matrix.rows, 1), 1);
  const std::uint32_t width = params_of(candidate).ell_width;
  if (ell->width() != width)
    throw_invalid("cuda_ell: candidate ell_width " + std::to_string(width) +
                  " differs from the matrix's longest row, " + std::to_string(ell->width()));
  if (precision == Precision::fp32)
    return std::make_unique<CudaEllOperator<float>>(std::move(ell), candidate.launch, device);
  return std::make_unique<CudaEllOperator<double>>(std::move(ell), candidate.launch, device);
}

}  // namespace spmvd
