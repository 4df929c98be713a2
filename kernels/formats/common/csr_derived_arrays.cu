#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "core/csr_matrix.hpp"
#include "core/error.hpp"
#include "kernels/cuda/cuda_check.cuh"
#include "kernels/formats/common/csr_derived_arrays.hpp"

namespace spmvd {
namespace {

constexpr int kBlockSize = 256;
constexpr int kWarpSize = 32;
// Grid-stride sweeps: 4096 blocks of 256 threads are several waves on any current GPU (132
// SMs x 2048 threads on H100 is 1056 blocks), so more blocks would only add launch overhead.
constexpr std::int64_t kMaxBlocks = 4096;

unsigned blocks_for_threads(std::int64_t threads) {
  return static_cast<unsigned>(
      std::clamp<std::int64_t>((threads + kBlockSize - 1) / kBlockSize, 1, kMaxBlocks));
}

cudaStream_t stream_of(const Device& device) {
  return static_cast<cudaStream_t>(device.native_stream());
}

// A warp per row, grid-stride over rows: the lanes write the row's index to its entries in
// 32-entry coalesced stores, so a long row is spread over 32 lanes, and an empty row costs its
// two offset loads.
__global__ void expand_row_indices_kernel(std::int64_t rows,
                                          const std::int64_t* __restrict__ row_offsets,
                                          std::int32_t* __restrict__ row_indices) {
  const std::int64_t warps = static_cast<std::int64_t>(gridDim.x) * (blockDim.x / kWarpSize);
  const int lane = static_cast<int>(threadIdx.x % kWarpSize);
  for (std::int64_t row =
           (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / kWarpSize;
       row < rows; row += warps) {
    const std::int64_t end = __ldg(row_offsets + row + 1);
    for (std::int64_t k = __ldg(row_offsets + row) + lane; k < end; k += kWarpSize)
      row_indices[k] = static_cast<std::int32_t>(row);
  }
}

template <typename To, typename From>
__global__ void convert_kernel(std::int64_t size, const From* __restrict__ from,
                               To* __restrict__ to) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < size;
       i += stride)
    to[i] = static_cast<To>(__ldg(from + i));
}

template <typename To, typename From>
DeviceBuffer convert(Device& device, const DeviceBuffer& from, std::int64_t size) {
  DeviceBuffer to(device, static_cast<std::size_t>(size) * sizeof(To));
  if (size == 0) return to;
  convert_kernel<To, From><<<blocks_for_threads(size), kBlockSize, 0, stream_of(device)>>>(
      size, from.as<const From>(), to.as<To>());
  SPMVD_CUDA_CHECK_LAUNCH();
  return to;
}

}  // namespace

DeviceBuffer expand_row_indices(Device& device, const DeviceCsrArrays& csr) {
  if (csr.rows > kMaxDimension)
    throw_invalid("coo row indices: " + std::to_string(csr.rows) +
                  " rows do not fit 32-bit row indices");
  DeviceBuffer row_indices(device, static_cast<std::size_t>(csr.nnz) * sizeof(std::int32_t));
  if (csr.nnz == 0) return row_indices;
  expand_row_indices_kernel<<<blocks_for_threads(csr.rows * kWarpSize), kBlockSize, 0,
                              stream_of(device)>>>(
      csr.rows, csr.row_offsets.as<const std::int64_t>(), row_indices.as<std::int32_t>());
  SPMVD_CUDA_CHECK_LAUNCH();
  return row_indices;
}

DeviceBuffer narrow_row_offsets(Device& device, const DeviceCsrArrays& csr) {
  if (csr.nnz > kMaxDimension)
    throw_invalid("csr offsets: " + std::to_string(csr.nnz) +
                  " entries do not fit 32-bit row offsets");
  return convert<std::int32_t, std::int64_t>(device, csr.row_offsets, csr.rows + 1);
}

DeviceBuffer widen_col_indices(Device& device, const DeviceCsrArrays& csr) {
  return convert<std::int64_t, std::int32_t>(device, csr.col_indices, csr.nnz);
}

std::shared_ptr<const DeviceBuffer> shared_row_indices(const BuildSource& source,
                                                       const DeviceCsrArrays& csr) {
  return source.shared_layout<DeviceBuffer>("coo_row_indices", [&] {
    return std::make_shared<const DeviceBuffer>(expand_row_indices(source.device(), csr));
  });
}

std::shared_ptr<const DeviceBuffer> shared_row_offsets32(const BuildSource& source,
                                                         const DeviceCsrArrays& csr) {
  return source.shared_layout<DeviceBuffer>("csr_offsets32", [&] {
    return std::make_shared<const DeviceBuffer>(narrow_row_offsets(source.device(), csr));
  });
}

std::shared_ptr<const DeviceBuffer> shared_col_indices64(const BuildSource& source,
                                                         const DeviceCsrArrays& csr) {
  return source.shared_layout<DeviceBuffer>("csr_columns64", [&] {
    return std::make_shared<const DeviceBuffer>(widen_col_indices(source.device(), csr));
  });
}

}  // namespace spmvd
