#include <memory>
#include <string>
#include <utility>

#include "core/error.hpp"
#include "kernels/cuda/cuda_check.cuh"
#include "kernels/formats/common/builder_checks.hpp"
#include "kernels/formats/common/spmv_device.cuh"
#include "kernels/formats/cuda_dia/cuda_dia_rules.hpp"
#include "kernels/formats/cuda_dia/dia_device_layout.hpp"

namespace spmvd {
namespace {

// One thread per row, grid-stride. Every thread of a warp reads the same offset (a broadcast)
// and consecutive values and x entries of each diagonal (coalesced).
template <typename Value>
__global__ void dia_kernel(std::int64_t rows, std::int64_t cols, std::int32_t diagonals,
                           const std::int32_t* __restrict__ offsets,
                           const Value* __restrict__ values, const Value* __restrict__ x,
                           Value* __restrict__ y, Value alpha, Value beta) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t row = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       row < rows; row += stride) {
    Value sum = 0;
    for (std::int32_t d = 0; d < diagonals; ++d) {
      const std::int64_t col = row + __ldg(offsets + d);
      if (col >= 0 && col < cols) sum += __ldg(values + d * rows + row) * __ldg(x + col);
    }
    catalogue_detail::store_axpby(y + row, alpha, sum, beta);
  }
}

// Holds the layout it shares with the other candidates of this matrix and precision (they
// differ only in block and grid size).
template <typename Value>
class CudaDiaOperator final : public SpmvOperator {
 public:
  CudaDiaOperator(std::shared_ptr<const DeviceDiaLayout> dia, const LaunchConfig& launch,
                  Device& device)
      : dia_(std::move(dia)),
        launch_(launch),
        stream_(static_cast<cudaStream_t>(device.native_stream())) {}

  void apply(const void* x, void* y, double alpha, double beta) override {
    if (dia_->rows == 0) return;
    dia_kernel<Value><<<launch_.grid_size, launch_.block_size, 0, stream_>>>(
        dia_->rows, dia_->cols, dia_->diagonals, dia_->offsets.as<const std::int32_t>(),
        dia_->values.as<const Value>(), static_cast<const Value*>(x), static_cast<Value*>(y),
        static_cast<Value>(alpha), static_cast<Value>(beta));
    SPMVD_CUDA_CHECK_LAUNCH();
  }

  Precision precision() const noexcept override { return precision_of<Value>(); }
  std::size_t device_bytes() const noexcept override { return dia_->bytes(); }

 private:
  std::shared_ptr<const DeviceDiaLayout> dia_;
  LaunchConfig launch_;
  cudaStream_t stream_;
};

}  // namespace

std::unique_ptr<SpmvOperator> CudaDiaRules::build(const BuildSource& source, Precision precision,
                                                  const Candidate& candidate) {
  check_candidate_format("cuda_dia", kCudaDiaFormatId, candidate);
  check_one_of("cuda_dia", "block_size", candidate.launch.block_size, kDiaBlockSizes);
  if (candidate.launch.grid_size == 0) throw_invalid("cuda_dia: grid_size is 0");
  Device& device = source.device();
  check_gpu_device("cuda_dia", device);
  // One layout per precision, whatever the launch: built on the device from the shared CSR.
  std::shared_ptr<const DeviceDiaLayout> dia = source.shared_layout<DeviceDiaLayout>(
      "dia/" + std::string(to_string(precision)),
      [&] { return build_dia_layout_on_device(device, *source.device_csr(precision)); });
  if (precision == Precision::fp32)
    return std::make_unique<CudaDiaOperator<float>>(std::move(dia), candidate.launch, device);
  return std::make_unique<CudaDiaOperator<double>>(std::move(dia), candidate.launch, device);
}

}  // namespace spmvd
