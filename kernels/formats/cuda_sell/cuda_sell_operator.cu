#include <memory>
#include <string>
#include <utility>

#include "core/error.hpp"
#include "kernels/cuda/cuda_check.cuh"
#include "kernels/formats/common/builder_checks.hpp"
#include "kernels/formats/common/device_sell.hpp"
#include "kernels/formats/common/spmv_device.cuh"
#include "kernels/formats/cuda_sell/cuda_sell_rules.hpp"

namespace spmvd {
namespace {

// Thread i handles sorted row i: slice i / C, lane i % C; the slice's slots are column-major,
// so the C threads of a slice read consecutive addresses. A row stops at its first padding
// slot (catalogue_detail::ell_row_sum). permutation == nullptr: sorted row i is row i.
template <typename Value, int SliceHeight>
__global__ void sell_kernel(std::int64_t rows, const std::int64_t* __restrict__ slice_offsets,
                            const std::int32_t* __restrict__ col_indices,
                            const Value* __restrict__ values,
                            const std::int32_t* __restrict__ permutation,
                            const Value* __restrict__ x, Value* __restrict__ y, Value alpha,
                            Value beta) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < rows;
       i += stride) {
    const std::int64_t slice = i / SliceHeight;
    const std::int64_t begin = __ldg(slice_offsets + slice);
    const std::int64_t width = (__ldg(slice_offsets + slice + 1) - begin) / SliceHeight;
    const Value sum = catalogue_detail::ell_row_sum(col_indices, values, x,
                                                    begin + i % SliceHeight, SliceHeight, width);
    const std::int64_t row = permutation ? __ldg(permutation + i) : i;
    catalogue_detail::store_axpby(y + row, alpha, sum, beta);
  }
}

template <typename Value>
class CudaSellOperator final : public SpmvOperator {
 public:
  CudaSellOperator(std::shared_ptr<const DeviceSellLayout> sell, const LaunchConfig& launch,
                   Device& device)
      : sell_(std::move(sell)),
        launch_(launch),
        stream_(static_cast<cudaStream_t>(device.native_stream())) {}

  void apply(const void* x, void* y, double alpha, double beta) override {
    if (sell_->rows == 0) return;
    switch (sell_->slice_height) {
      case 32:
        return launch<32>(x, y, alpha, beta);
      case 64:
        return launch<64>(x, y, alpha, beta);
      default:  // build() admits only kSellSliceHeights, each a case above
        throw Error(ErrorCode::internal, "cuda_sell: slice height " +
                                             std::to_string(sell_->slice_height) +
                                             " has no compiled kernel");
    }
  }

  Precision precision() const noexcept override { return precision_of<Value>(); }
  std::size_t device_bytes() const noexcept override {
    return sell_->slice_offsets.bytes() + sell_->col_indices.bytes() + sell_->values.bytes() +
           sell_->permutation.bytes();
  }

 private:
  template <int SliceHeight>
  void launch(const void* x, void* y, double alpha, double beta) {
    sell_kernel<Value, SliceHeight><<<launch_.grid_size, launch_.block_size, 0, stream_>>>(
        sell_->rows, sell_->slice_offsets.as<const std::int64_t>(),
        sell_->col_indices.as<const std::int32_t>(), sell_->values.as<const Value>(),
        sell_->permutation.as<const std::int32_t>(), static_cast<const Value*>(x),
        static_cast<Value*>(y), static_cast<Value>(alpha), static_cast<Value>(beta));
    SPMVD_CUDA_CHECK_LAUNCH();
  }

  // Shared with every candidate of the same (C, sigma, precision); its permutation is empty
  // (null) when the rows were not sorted.
  std::shared_ptr<const DeviceSellLayout> sell_;
  LaunchConfig launch_;
  cudaStream_t stream_;
};

}  // namespace

std::unique_ptr<SpmvOperator> CudaSellRules::build(const BuildSource& source, Precision precision,
                                                   const Candidate& candidate) {
  Device& device = source.device();
  check_candidate_format("cuda_sell", kCudaSellFormatId, candidate);
  const CudaSellParams params = params_of(candidate);
  check_one_of("cuda_sell", "slice_height", params.slice_height, kSellSliceHeights);
  check_one_of("cuda_sell", "block_size", candidate.launch.block_size, kSellBlockSizes);
  if (params.sort_window == 0) throw_invalid("cuda_sell: sort_window is 0");
  if (candidate.launch.grid_size == 0) throw_invalid("cuda_sell: grid_size is 0");
  check_gpu_device("cuda_sell", device);
  const std::int64_t height = params.slice_height, window = params.sort_window;
  auto sell = shared_device_sell_layout(source, precision, height, window);
  if (precision == Precision::fp32)
    return std::make_unique<CudaSellOperator<float>>(std::move(sell), candidate.launch, device);
  return std::make_unique<CudaSellOperator<double>>(std::move(sell), candidate.launch, device);
}

}  // namespace spmvd
