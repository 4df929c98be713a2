#pragma once
// A vector in another order: gathered[i] = x[order[i]] (a symmetric reordering's x on the way
// in, cuda_bro_ell's and cuda_csr_rcm's RCM; cuda_csr_rcm's and cuda_ehyb's y on the way out).
// One thread an entry, grid-stride; the reads follow the order through the caller's numbering,
// the writes are coalesced.

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "kernels/cuda/cuda_check.cuh"

namespace spmvd::catalogue_detail {

template <typename Value>
__global__ void gather_kernel(std::int64_t size, const std::int32_t* __restrict__ order,
                              const Value* __restrict__ x, Value* __restrict__ gathered,
                              Value beta) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < size;
       i += stride) {
    const Value value = __ldg(x + __ldg(order + i));
    // beta == 0: `gathered` is write-only, so NaN already in it cannot leak into the result.
    gathered[i] = beta == Value(0) ? value : value + beta * gathered[i];
  }
}

// gathered[i] = x[order[i]] (+ beta * gathered[i]) for i < size, on `stream` (no-op for size
// 0): x into a format's own order (beta 0), or a result in a format's order back into the
// caller's y through the inverse order (cuda_csr_rcm). 256 threads, at most 4096 blocks (as
// launch_scale: a bandwidth-bound sweep).
template <typename Value>
void launch_gather(std::int64_t size, const std::int32_t* order, const Value* x, Value* gathered,
                   cudaStream_t stream, Value beta = Value(0)) {
  if (size <= 0) return;
  const auto blocks = static_cast<unsigned>(std::min<std::int64_t>((size + 255) / 256, 4096));
  gather_kernel<Value><<<blocks, 256, 0, stream>>>(size, order, x, gathered, beta);
  SPMVD_CUDA_CHECK_LAUNCH();
}

}  // namespace spmvd::catalogue_detail
