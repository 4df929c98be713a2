#include <string>

#include "core/error.hpp"
#include "kernels/cuda/cuda_check.cuh"
#include "kernels/formats/common/builder_checks.hpp"
#include "kernels/formats/common/sell_layout.hpp"
#include "kernels/formats/common/spmv_device.cuh"
#include "kernels/formats/cuda_sell/cuda_sell_rules.hpp"

namespace spmvd {
namespace {

// Thread i handles sorted row i: slice i / C, lane i % C; the slice's slots are column-major,
// so the C threads of a slice read consecutive addresses. A row stops at its first padding
// slot (see ell_kernel). permutation == nullptr: sorted row i is row i.
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
    const std::int64_t end = __ldg(slice_offsets + slice + 1);
    Value sum = 0;
    for (std::int64_t slot = __ldg(slice_offsets + slice) + i % SliceHeight; slot < end;
         slot += SliceHeight) {
      const std::int32_t col = __ldg(col_indices + slot);
      if (col < 0) break;
      sum += __ldg(values + slot) * __ldg(x + col);
    }
    const std::int64_t row = permutation ? __ldg(permutation + i) : i;
    catalogue_detail::store_axpby(y + row, alpha, sum, beta);
  }
}

template <typename Value>
class CudaSellOperator final : public SpmvOperator {
 public:
  CudaSellOperator(const SellLayout<Value>& sell, const LaunchConfig& launch, Device& device)
      : rows_(sell.rows),
        slice_height_(sell.slice_height),
        launch_(launch),
        stream_(static_cast<cudaStream_t>(device.native_stream())),
        slice_offsets_(upload(device, sell.slice_offsets.data(), sell.slice_offsets.size())),
        col_indices_(upload(device, sell.col_indices.data(), sell.col_indices.size())),
        values_(upload(device, sell.values.data(), sell.values.size())),
        permutation_(upload(device, sell.permutation.data(), sell.permutation.size())) {}

  void apply(const void* x, void* y, double alpha, double beta) override {
    if (rows_ == 0) return;
    switch (slice_height_) {
      case 32:
        return launch<32>(x, y, alpha, beta);
      case 64:
        return launch<64>(x, y, alpha, beta);
      default:  // build() admits only kSellSliceHeights, each a case above
        throw Error(
            ErrorCode::internal,
            "cuda_sell: slice height " + std::to_string(slice_height_) + " has no compiled kernel");
    }
  }

  Precision precision() const noexcept override { return precision_of<Value>(); }
  std::size_t device_bytes() const noexcept override {
    return slice_offsets_.bytes() + col_indices_.bytes() + values_.bytes() + permutation_.bytes();
  }

 private:
  template <int SliceHeight>
  void launch(const void* x, void* y, double alpha, double beta) {
    sell_kernel<Value, SliceHeight><<<launch_.grid_size, launch_.block_size, 0, stream_>>>(
        rows_, slice_offsets_.as<const std::int64_t>(), col_indices_.as<const std::int32_t>(),
        values_.as<const Value>(), permutation_.as<const std::int32_t>(),
        static_cast<const Value*>(x), static_cast<Value*>(y), static_cast<Value>(alpha),
        static_cast<Value>(beta));
    SPMVD_CUDA_CHECK_LAUNCH();
  }

  std::int64_t rows_;
  std::int64_t slice_height_;
  LaunchConfig launch_;
  cudaStream_t stream_;
  DeviceBuffer slice_offsets_;
  DeviceBuffer col_indices_;
  DeviceBuffer values_;
  DeviceBuffer permutation_;  // empty (null) when the rows were not sorted
};

}  // namespace

std::unique_ptr<SpmvOperator> CudaSellRules::build(const CsrMatrix<double>& matrix,
                                                   Precision precision, const Candidate& candidate,
                                                   Device& device) {
  check_candidate_format("cuda_sell", kCudaSellFormatId, candidate);
  const CudaSellParams params = params_of(candidate);
  check_one_of("cuda_sell", "slice_height", params.slice_height, kSellSliceHeights);
  check_one_of("cuda_sell", "block_size", candidate.launch.block_size, kSellBlockSizes);
  if (params.sort_window == 0) throw_invalid("cuda_sell: sort_window is 0");
  if (candidate.launch.grid_size == 0) throw_invalid("cuda_sell: grid_size is 0");
  check_gpu_device("cuda_sell", device);
  const std::int64_t height = params.slice_height, window = params.sort_window;
  if (precision == Precision::fp32)
    return std::make_unique<CudaSellOperator<float>>(
        make_sell_layout<float>(matrix, height, window), candidate.launch, device);
  return std::make_unique<CudaSellOperator<double>>(
      make_sell_layout<double>(matrix, height, window), candidate.launch, device);
}

}  // namespace spmvd
