#pragma once
// Device pieces the catalogue's CUDA kernels share: the y = alpha*sum + beta*y epilogue, the
// y = beta*y pre-pass, and the column-major ELL kernel (cuda_ell, and cuda_hyb's ELL part).

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "kernels/cuda/cuda_check.cuh"

namespace spmvd::catalogue_detail {

// beta == 0: y is write-only (SpmvOperator contract), so NaN already in y cannot leak.
template <typename Value>
__device__ __forceinline__ void store_axpby(Value* y, Value alpha, Value sum, Value beta) {
  *y = beta == Value(0) ? alpha * sum : alpha * sum + beta * *y;
}

template <typename Value>
__global__ void scale_kernel(std::int64_t size, Value* __restrict__ y, Value beta) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < size;
       i += stride)
    y[i] = beta == Value(0) ? Value(0) : beta * y[i];
}

// y = beta*y on `stream` (no-op for size 0). A bandwidth-bound sweep: 256 threads, at most
// 4096 blocks, grid-stride beyond.
template <typename Value>
void launch_scale(std::int64_t size, Value* y, Value beta, cudaStream_t stream) {
  if (size <= 0) return;
  const auto blocks = static_cast<unsigned>(std::min<std::int64_t>((size + 255) / 256, 4096));
  scale_kernel<Value><<<blocks, 256, 0, stream>>>(size, y, beta);
  SPMVD_CUDA_CHECK_LAUNCH();
}

// One row's sum over its `slots` ELL slots from `slot` on, `step` apart (a column-major block),
// padding (is_padding(column) true, value 0) after its entries, added in slot order; gather(c)
// reads x's value for stored column c (global x, or a shared-memory slice of it). A row stops with
// the group of slots that holds its first padding slot, and a padding slot's x is never read, so 0
// * x[...] never turns an Inf in x into NaN. Four slots at a time: their index and value loads do
// not depend on each other, so a thread has four of each in flight before its gathers; testing each
// index before loading the next waits a whole memory latency a slot (banded-17M, fp32: 0.79 of ALG1
// that way, 1.06 grouped; H100, 2026-11-24, docs/BENCHMARKS.md "Kernel choices"). The one to three
// slots past the last group of four are loaded together too, not one at a time (each an index, then
// its value and gather: up to six dependent latencies after the groups); the groups themselves stay
// unmasked: with a bound test on every slot's loads, cuda_ell ran 5-13 % slower in fp64 (H100,
// 2026-11-25, docs/BENCHMARKS.md "Kernel choices"). The price: a row
// reads the values of up to three padding slots after its end (a padded ELL:
// delaunay_n16-x48-renumbered at width 17, fp64, 0.82 -> 0.72, where HYB is the one to use).
// Loading each value with its gather, after the indices, reads no padding values but costs the
// regular inputs 8-10 %: two dependent rounds a group rather than one.
template <typename Value, typename Column, typename IsPadding, typename Gather>
__device__ __forceinline__ Value grouped_slot_sum(const Column* __restrict__ columns,
                                                  const Value* __restrict__ values,
                                                  std::int64_t slot, std::int64_t step,
                                                  std::int64_t slots, IsPadding is_padding,
                                                  Gather gather) {
  Value sum = 0;
  std::int64_t j = 0;
  for (; j + 4 <= slots; j += 4, slot += 4 * step) {
    Column col[4];
    Value value[4];
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      col[k] = __ldg(columns + slot + k * step);
      value[k] = __ldg(values + slot + k * step);
    }
#pragma unroll
    for (int k = 0; k < 4; ++k)
      if (!is_padding(col[k])) sum += value[k] * gather(col[k]);
    if (is_padding(col[3])) return sum;  // the padding began in this group
  }
  // The width's last one to three slots, loaded together as the groups are.
  const std::int64_t live = slots - j;
  Column col[3] = {};
  Value value[3] = {};
#pragma unroll
  for (int k = 0; k < 3; ++k) {
    if (k < live) {
      col[k] = __ldg(columns + slot + k * step);
      value[k] = __ldg(values + slot + k * step);
    }
  }
#pragma unroll
  for (int k = 0; k < 3; ++k)
    if (k < live && !is_padding(col[k])) sum += value[k] * gather(col[k]);
  return sum;
}

// grouped_slot_sum over a block of 32-bit column indices into global x (kPaddingColumn < 0).
template <typename Value>
__device__ __forceinline__ Value ell_row_sum(const std::int32_t* __restrict__ col_indices,
                                             const Value* __restrict__ values,
                                             const Value* __restrict__ x, std::int64_t slot,
                                             std::int64_t step, std::int64_t slots) {
  return grouped_slot_sum(
      col_indices, values, slot, step, slots, [](std::int32_t col) { return col < 0; },
      [x](std::int32_t col) { return __ldg(x + col); });
}

// One thread per row over a column-major ELL block (entry j of row r at j*rows + r; padding
// column kPaddingColumn after a row's entries), grid-stride over rows (ell_row_sum).
template <typename Value>
__global__ void ell_kernel(std::int64_t rows, std::int64_t width,
                           const std::int32_t* __restrict__ col_indices,
                           const Value* __restrict__ values, const Value* __restrict__ x,
                           Value* __restrict__ y, Value alpha, Value beta) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t row = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       row < rows; row += stride) {
    store_axpby(y + row, alpha, ell_row_sum(col_indices, values, x, row, rows, width), beta);
  }
}

}  // namespace spmvd::catalogue_detail
