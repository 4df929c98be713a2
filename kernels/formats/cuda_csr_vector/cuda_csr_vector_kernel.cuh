#pragma once
// y = alpha*A*x + beta*y, one group of ThreadsPerRow lanes of a warp per row (CSR vector,
// Bell & Garland, "Implementing sparse matrix-vector multiplication on throughput-oriented
// processors", SC'09), warp-shuffle reduction within the group, grid-stride over rows.

#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>

#include "core/error.hpp"
#include "kernels/cuda/cuda_check.cuh"

namespace spmvd::csr_vector_detail {

// Where row i's result goes: y[i] (cuda_csr_vector) ...
struct IdentityRows {
  __device__ __forceinline__ std::int64_t operator()(std::int64_t row) const { return row; }
};
// ... or y[permutation[i]], for a format that stores the rows in another order (cuda_strip's
// length-sorted CSR part writes the caller's rows).
struct PermutedRows {
  const std::int32_t* permutation;
  __device__ __forceinline__ std::int64_t operator()(std::int64_t row) const {
    return __ldg(permutation + row);
  }
};

template <typename Value, int ThreadsPerRow, typename OutputRow = IdentityRows>
__global__ void csr_vector_kernel(std::int64_t rows, const std::int64_t* __restrict__ row_offsets,
                                  const std::int32_t* __restrict__ col_indices,
                                  const Value* __restrict__ values, const Value* __restrict__ x,
                                  Value* __restrict__ y, Value alpha, Value beta,
                                  OutputRow output_row = {}) {
  static_assert(
      ThreadsPerRow >= 2 && ThreadsPerRow <= 32 && (ThreadsPerRow & (ThreadsPerRow - 1)) == 0,
      "a row group is a power-of-two slice of one warp");
  const std::int64_t thread = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int lane = static_cast<int>(threadIdx.x % ThreadsPerRow);
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x / ThreadsPerRow;
  // The groups of one warp hold consecutive rows; the loop runs while the warp's first row is in
  // range, so all 32 lanes stay in the loop together and the full-mask shuffles are legal.
  const std::int64_t group_in_warp = (threadIdx.x % 32) / ThreadsPerRow;
  for (std::int64_t row = thread / ThreadsPerRow; row - group_in_warp < rows; row += stride) {
    Value sum = 0;
    if (row < rows) {
      const std::int64_t end = __ldg(row_offsets + row + 1);
      for (std::int64_t k = __ldg(row_offsets + row) + lane; k < end; k += ThreadsPerRow)
        sum += __ldg(values + k) * __ldg(x + __ldg(col_indices + k));
    }
#pragma unroll
    for (int offset = ThreadsPerRow / 2; offset > 0; offset /= 2)
      sum += __shfl_down_sync(0xffffffffU, sum, offset, ThreadsPerRow);
    if (lane == 0 && row < rows) {
      // beta == 0: y is write-only, so NaN already in y cannot leak into the result.
      Value& out = y[output_row(row)];
      out = beta == Value(0) ? alpha * sum : alpha * sum + beta * out;
    }
  }
}

// Launches csr_vector_kernel at `threads_per_row` lanes a row (each of kCsrVectorThreadsPerRow
// is compiled) on `stream`. Throws Error(internal) naming `owner` for any other width: the
// builders admit only those.
template <typename Value, typename OutputRow = IdentityRows>
void launch_csr_vector(std::string_view owner, std::uint32_t threads_per_row, unsigned grid,
                       unsigned block, cudaStream_t stream, std::int64_t rows,
                       const std::int64_t* row_offsets, const std::int32_t* col_indices,
                       const Value* values, const Value* x, Value* y, Value alpha, Value beta,
                       OutputRow output_row = {}) {
  const auto run = [&](auto lanes) {
    csr_vector_kernel<Value, decltype(lanes)::value, OutputRow><<<grid, block, 0, stream>>>(
        rows, row_offsets, col_indices, values, x, y, alpha, beta, output_row);
  };
  switch (threads_per_row) {
    case 2:
      run(std::integral_constant<int, 2>{});
      break;
    case 4:
      run(std::integral_constant<int, 4>{});
      break;
    case 8:
      run(std::integral_constant<int, 8>{});
      break;
    case 16:
      run(std::integral_constant<int, 16>{});
      break;
    case 32:
      run(std::integral_constant<int, 32>{});
      break;
    default:
      throw Error(ErrorCode::internal, std::string(owner) + ": threads_per_row " +
                                           std::to_string(threads_per_row) +
                                           " has no compiled kernel");
  }
  SPMVD_CUDA_CHECK_LAUNCH();
}

}  // namespace spmvd::csr_vector_detail
