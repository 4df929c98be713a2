#pragma once
// COO SpMV by warp-level segmented reduction (Bell & Garland, SC'09, Sec. 3.4, with shuffles in
// place of their shared-memory scan). Adds alpha*A*x into y; y must already hold beta*y.
//
// Warp w owns entries [w*E, (w+1)*E) (E = entries_per_warp, a multiple of 32) and walks them 32
// at a time. Each round: lane i loads entry (row_i, a_i * x[col_i]); an inclusive segmented
// scan over equal rows (rows are sorted, so equal rows are contiguous) leaves each row's partial
// sum on the last lane holding it; the row still open at lane 31 is carried into the next round
// instead of being written. A row is therefore written once per warp. Only the first and the
// last row of the interval can also be touched by a neighbouring warp: those take an atomic add
// (at most two per warp); every other row is owned by this warp and takes a plain add.

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "kernels/cuda/cuda_check.cuh"

namespace spmvd::catalogue_detail {

template <typename Value>
__global__ void coo_segmented_kernel(std::int64_t nnz, std::int64_t entries_per_warp,
                                     const std::int32_t* __restrict__ row_indices,
                                     const std::int32_t* __restrict__ col_indices,
                                     const Value* __restrict__ values, const Value* __restrict__ x,
                                     Value* __restrict__ y, Value alpha) {
  constexpr unsigned kFullMask = 0xffffffffU;
  const int lane = static_cast<int>(threadIdx.x % 32);
  const std::int64_t warp = (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const std::int64_t begin = warp * entries_per_warp;
  if (begin >= nnz) return;  // uniform across the warp: every lane has the same `begin`
  const std::int64_t end = std::min(begin + entries_per_warp, nnz);
  const std::int32_t first_row = __ldg(row_indices + begin);
  const std::int32_t last_row = __ldg(row_indices + end - 1);
  const auto add = [&](std::int32_t row, Value value) {
    if (row == first_row || row == last_row)
      atomicAdd(y + row, value);
    else
      y[row] += value;
  };

  Value carry = 0;
  std::int32_t carry_row = first_row;
  for (std::int64_t base = begin; base < end; base += 32) {
    const std::int64_t k = base + lane;
    std::int32_t row = -1;  // lanes past the interval: a segment of their own, never written
    Value v = 0;
    if (k < end) {
      row = __ldg(row_indices + k);
      v = __ldg(values + k) * __ldg(x + __ldg(col_indices + k));
    }
    if (lane == 0) {
      if (row == carry_row)
        v += carry;
      else  // the carried row ended exactly at the previous round's last lane
        add(carry_row, alpha * carry);
    }
#pragma unroll
    for (int offset = 1; offset < 32; offset *= 2) {
      const Value up = __shfl_up_sync(kFullMask, v, offset);
      const std::int32_t up_row = __shfl_up_sync(kFullMask, row, offset);
      if (lane >= offset && up_row == row) v += up;
    }
    const std::int32_t next_row = __shfl_down_sync(kFullMask, row, 1);
    const bool last_round = base + 32 >= end;
    carry = __shfl_sync(kFullMask, v, 31);
    carry_row = __shfl_sync(kFullMask, row, 31);
    const bool segment_end = lane == 31 ? last_round : next_row != row;
    if (segment_end && row >= 0) add(row, alpha * v);
  }
}

// Entries per warp for a grid of `grid_size` blocks of `block_size` threads: the nnz split
// evenly over the warps, rounded up to whole 32-entry rounds.
inline std::int64_t coo_entries_per_warp(std::int64_t nnz, std::uint32_t grid_size,
                                         std::uint32_t block_size) {
  const std::int64_t warps =
      std::max<std::int64_t>(1, static_cast<std::int64_t>(grid_size) * block_size / 32);
  const std::int64_t per_warp = (nnz + warps - 1) / warps;
  return std::max<std::int64_t>(32, (per_warp + 31) / 32 * 32);
}

// y += alpha * A * x for a COO block; no-op without entries.
template <typename Value>
void launch_coo_segmented(std::int64_t nnz, const std::int32_t* row_indices,
                          const std::int32_t* col_indices, const Value* values, const Value* x,
                          Value* y, Value alpha, std::uint32_t grid_size, std::uint32_t block_size,
                          cudaStream_t stream) {
  if (nnz <= 0) return;
  const std::int64_t per_warp = coo_entries_per_warp(nnz, grid_size, block_size);
  // Only as many blocks as have entries: a grid chosen for another nnz never launches idle ones.
  const std::int64_t warps_needed = (nnz + per_warp - 1) / per_warp;
  const std::int64_t warps_per_block = block_size / 32;
  const auto blocks = static_cast<unsigned>((warps_needed + warps_per_block - 1) / warps_per_block);
  coo_segmented_kernel<Value><<<blocks, block_size, 0, stream>>>(nnz, per_warp, row_indices,
                                                                 col_indices, values, x, y, alpha);
  SPMVD_CUDA_CHECK_LAUNCH();
}

}  // namespace spmvd::catalogue_detail
