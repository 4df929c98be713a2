#pragma once
// The BRO kernels (paper 001): BRO-ELL (Algorithm 1) and BRO-COO (Sec. 3.2). The decode they
// run is bro_decode.hpp (host and device, unit-tested on the host); bit order and layouts are
// bro_stream.hpp.

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/formats/common/bro_decode.hpp"
#include "kernels/formats/common/spmv_device.cuh"

namespace spmvd::bro_detail {

// Algorithm 1, one (sub-)row per thread, kLanes consecutive threads per matrix row (their sums
// added by shuffles). Stream row g = slice s = g / h, row t = g % h of it. Grid-stride in steps
// that keep every warp inside one slice (h and blockDim are multiples of 32), so the shuffles
// see whole warps. y[order[row]] (or y[row] without order) = alpha * sum + beta * y.
template <typename Value, int kWords, int kLanes>
__global__ void bro_ell_kernel(std::int64_t stream_rows, std::int64_t slice_height,
                               const std::int64_t* __restrict__ col_offsets,
                               const std::int64_t* __restrict__ word_offsets,
                               const std::uint8_t* __restrict__ bit_alloc,
                               const std::uint32_t* __restrict__ stream,
                               const Value* __restrict__ values,
                               const std::int32_t* __restrict__ order, const Value* __restrict__ x,
                               Value* __restrict__ y, Value alpha, Value beta) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t base = static_cast<std::int64_t>(blockIdx.x) * blockDim.x; base < stream_rows;
       base += stride) {
    const std::int64_t g = base + threadIdx.x;
    Value sum = 0;
    if (g < stream_rows) {
      const std::int64_t s = g / slice_height;
      const std::int64_t t = g - s * slice_height;
      const std::int64_t height = min(slice_height, stream_rows - s * slice_height);
      const std::int64_t first_col = __ldg(col_offsets + s);
      const std::int64_t first_word = __ldg(word_offsets + s);
      const std::int64_t row_words = (__ldg(word_offsets + s + 1) - first_word) / height;
      sum = bro::bro_ell_row_sum<Value, kWords>(
          stream + first_word, height, t, row_words, bit_alloc + first_col,
          __ldg(col_offsets + s + 1) - first_col, values + first_col * slice_height, x);
    }
    if constexpr (kLanes > 1) {
#pragma unroll
      for (int offset = kLanes / 2; offset > 0; offset /= 2)
        sum += __shfl_down_sync(0xffffffffU, sum, offset, kLanes);
    }
    if (g < stream_rows && g % kLanes == 0) {
      const std::int64_t row = g / kLanes;
      const std::int64_t out = order ? __ldg(order + row) : row;
      catalogue_detail::store_axpby(y + out, alpha, sum, beta);
    }
  }
}

// BRO-COO (Sec. 3.2): one warp an interval (grid-stride over intervals), 32 entries a round,
// the row of lane l's entry decoded from lane l's stream (the deltas down the interval), then
// cuda_coo's segmented warp reduction (segmented_coo_kernel.cuh: a shuffle scan over equal rows,
// the open row carried to the next round, atomics only on the interval's first and last rows).
// Adds alpha*A*x into y (y already holds beta*y).
template <typename Value>
__global__ void bro_coo_kernel(std::int64_t nnz, std::int64_t interval_entries,
                               std::int64_t intervals, const std::int32_t* __restrict__ first_rows,
                               const std::int32_t* __restrict__ last_rows,
                               const std::uint8_t* __restrict__ interval_bits,
                               const std::int64_t* __restrict__ word_offsets,
                               const std::uint32_t* __restrict__ stream,
                               const std::int32_t* __restrict__ col_indices,
                               const Value* __restrict__ values, const Value* __restrict__ x,
                               Value* __restrict__ y, Value alpha) {
  constexpr unsigned kFullMask = 0xffffffffU;
  const int lane = static_cast<int>(threadIdx.x % 32);
  const std::int64_t warps = static_cast<std::int64_t>(gridDim.x) * blockDim.x / 32;
  for (std::int64_t interval =
           (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
       interval < intervals; interval += warps) {
    const std::int64_t begin = interval * interval_entries;
    const std::int64_t end = min(begin + interval_entries, nnz);
    const std::int32_t first_row = __ldg(first_rows + interval);
    const std::int32_t last_row = __ldg(last_rows + interval);
    const std::uint32_t bits = __ldg(interval_bits + interval);
    bro::BitReader<bro::ScalarWords> reader{{stream + __ldg(word_offsets + interval) + lane, 32}};
    const auto add = [&](std::int32_t row, Value value) {
      if (row == first_row || row == last_row)
        atomicAdd(y + row, value);
      else
        y[row] += value;
    };
    std::int32_t lane_row = first_row;  // the row of this lane's previous entry
    Value carry = 0;
    std::int32_t carry_row = first_row;
    for (std::int64_t round_base = begin; round_base < end; round_base += 32) {
      const std::int64_t k = round_base + lane;
      lane_row += static_cast<std::int32_t>(reader.read(bits));  // every lane: uniform refills
      std::int32_t row = -1;  // lanes past the interval: a segment of their own, never written
      Value v = 0;
      if (k < end) {
        row = lane_row;
        v = __ldg(values + k) * __ldg(x + __ldg(col_indices + k));
      }
      if (lane == 0) {
        if (row == carry_row)
          v += carry;
        else
          add(carry_row, alpha * carry);
      }
#pragma unroll
      for (int offset = 1; offset < 32; offset *= 2) {
        const Value up = __shfl_up_sync(kFullMask, v, offset);
        const std::int32_t up_row = __shfl_up_sync(kFullMask, row, offset);
        if (lane >= offset && up_row == row) v += up;
      }
      const std::int32_t next_row = __shfl_down_sync(kFullMask, row, 1);
      const bool last_round = round_base + 32 >= end;
      carry = __shfl_sync(kFullMask, v, 31);
      carry_row = __shfl_sync(kFullMask, row, 31);
      const bool segment_end = lane == 31 ? last_round : next_row != row;
      if (segment_end && row >= 0) add(row, alpha * v);
    }
  }
}

}  // namespace spmvd::bro_detail
