#pragma once
// x in a format's own column order: gathered[i] = x[order[i]] (a symmetric reordering's x on
// the way in, cuda_bro_ell's RCM). One thread an entry, grid-stride; the reads follow the order
// through the caller's numbering, the writes are coalesced.

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "kernels/cuda/cuda_check.cuh"

namespace spmvd::catalogue_detail {

template <typename Value>
__global__ void gather_kernel(std::int64_t size, const std::int32_t* __restrict__ order,
                              const Value* __restrict__ x, Value* __restrict__ gathered) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < size;
       i += stride)
    gathered[i] = __ldg(x + __ldg(order + i));
}

// gathered[i] = x[order[i]] for i < size, on `stream` (no-op for size 0). 256 threads, at most
// 4096 blocks (as launch_scale: a bandwidth-bound sweep).
template <typename Value>
void launch_gather(std::int64_t size, const std::int32_t* order, const Value* x, Value* gathered,
                   cudaStream_t stream) {
  if (size <= 0) return;
  const auto blocks = static_cast<unsigned>(std::min<std::int64_t>((size + 255) / 256, 4096));
  gather_kernel<Value><<<blocks, 256, 0, stream>>>(size, order, x, gathered);
  SPMVD_CUDA_CHECK_LAUNCH();
}

}  // namespace spmvd::catalogue_detail
