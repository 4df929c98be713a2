#include <string>

#include "core/error.hpp"
#include "kernels/cuda/cuda_check.cuh"
#include "kernels/device_lock.hpp"
#include "kernels/formats/common/builder_checks.hpp"
#include "kernels/formats/common/spmv_device.cuh"
#include "kernels/formats/cuda_csr_vector/cuda_csr_vector_kernel.cuh"
#include "kernels/formats/cuda_csr_vector/cuda_csr_vector_rules.hpp"
#include "kernels/formats/cuda_ell/cuda_ell_rules.hpp"
#include "kernels/formats/cuda_strip/cuda_strip_rules.hpp"
#include "kernels/formats/cuda_strip/strip_layout.hpp"

namespace spmvd {
namespace {

// The ELL part (paper 004 Sec. 5, the rows below the separator): one thread per sorted row,
// grid-stride; entry j of row i at j * rows + i, so the threads of a warp read consecutive
// slots. Each row stops at its own length: no padding slot is read and no per-entry test is
// made; sorted rows keep the lengths within a warp nearly equal. The result goes to the
// caller's row, permutation[i].
template <typename Value>
__global__ void strip_ell_kernel(std::int64_t rows, const std::int32_t* __restrict__ lengths,
                                 const std::int32_t* __restrict__ col_indices,
                                 const Value* __restrict__ values,
                                 const std::int32_t* __restrict__ permutation,
                                 const Value* __restrict__ x, Value* __restrict__ y, Value alpha,
                                 Value beta) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t row = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       row < rows; row += stride) {
    const std::int32_t length = __ldg(lengths + row);
    Value sum = 0;
    std::int64_t slot = row;
    for (std::int32_t j = 0; j < length; ++j, slot += rows)
      sum += __ldg(values + slot) * __ldg(x + __ldg(col_indices + slot));
    catalogue_detail::store_axpby(y + __ldg(permutation + row), alpha, sum, beta);
  }
}

// The hopper variant's block rows (the longest sorted rows, block_per_row_min_length): one block
// of BlockSize threads per row, thread k taking entries k, k + BlockSize, ... (coalesced; the
// tiling of block_row_warp_shares), the warps' sums reduced with shuffles, then across the
// block's warps through shared memory. The row's walk is ceil(length / BlockSize) steps a
// thread instead of ceil(length / 32) for a warp per row.
template <typename Value, int BlockSize>
__global__ void __launch_bounds__(BlockSize)
    strip_block_row_kernel(const std::int64_t* __restrict__ row_offsets,
                           const std::int32_t* __restrict__ col_indices,
                           const Value* __restrict__ values,
                           const std::int32_t* __restrict__ permutation,
                           const Value* __restrict__ x, Value* __restrict__ y, Value alpha,
                           Value beta) {
  static_assert(BlockSize % 32 == 0 && BlockSize / 32 <= 32,
                "whole warps, whose sums one warp reduces");
  constexpr int kWarps = BlockSize / 32;
  __shared__ Value warp_sums[kWarps];
  const std::int64_t row = blockIdx.x;  // one block a row: the grid is the block rows
  const std::int64_t end = __ldg(row_offsets + row + 1);
  Value sum = 0;
  for (std::int64_t k = __ldg(row_offsets + row) + threadIdx.x; k < end; k += BlockSize)
    sum += __ldg(values + k) * __ldg(x + __ldg(col_indices + k));
  const int lane = static_cast<int>(threadIdx.x % 32);
  const int warp = static_cast<int>(threadIdx.x / 32);
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_down_sync(0xffffffffU, sum, offset);
  if (lane == 0) warp_sums[warp] = sum;
  __syncthreads();
  if (warp == 0) {
    sum = lane < kWarps ? warp_sums[lane] : Value(0);
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2)
      sum += __shfl_down_sync(0xffffffffU, sum, offset);
    if (lane == 0) catalogue_detail::store_axpby(y + __ldg(permutation + row), alpha, sum, beta);
  }
}

template <typename Value>
class CudaStripOperator final : public SpmvOperator {
 public:
  CudaStripOperator(const StripLayout<Value>& layout, const CudaStripParams& params,
                    Device& device)
      : rows_(layout.rows),
        separator_(layout.separator),
        block_rows_(params.block_rows),
        params_(params),
        csr_grid_(CudaCsrVectorRules::grid_size(layout.separator - params.block_rows,
                                                params.csr_threads_per_row,
                                                params.csr_block_size, device.info())),
        ell_grid_(CudaCsrVectorRules::grid_size(layout.ell_rows(), 1, params.ell_block_size,
                                                device.info())),
        stream_(static_cast<cudaStream_t>(device.native_stream())),
        permutation_(upload(device, layout.permutation.data(), layout.permutation.size())),
        csr_row_offsets_(
            upload(device, layout.csr_row_offsets.data(), layout.csr_row_offsets.size())),
        csr_col_indices_(
            upload(device, layout.csr_col_indices.data(), layout.csr_col_indices.size())),
        csr_values_(upload(device, layout.csr_values.data(), layout.csr_values.size())),
        ell_lengths_(upload(device, layout.ell_lengths.data(), layout.ell_lengths.size())),
        ell_col_indices_(
            upload(device, layout.ell_col_indices.data(), layout.ell_col_indices.size())),
        ell_values_(upload(device, layout.ell_values.data(), layout.ell_values.size())) {}

  void apply(const void* x, void* y, double alpha, double beta) override {
    if (rows_ == 0) return;
    // The parts write disjoint rows of y: one after the other on the stream, no sync.
    if (block_rows_ > 0) launch_block_rows(x, y, alpha, beta);
    if (separator_ > block_rows_) launch_csr(x, y, alpha, beta);
    if (rows_ > separator_) {
      strip_ell_kernel<Value><<<ell_grid_, params_.ell_block_size, 0, stream_>>>(
          rows_ - separator_, ell_lengths_.as<const std::int32_t>(),
          ell_col_indices_.as<const std::int32_t>(), ell_values_.as<const Value>(),
          permutation_.as<const std::int32_t>() + separator_, static_cast<const Value*>(x),
          static_cast<Value*>(y), static_cast<Value>(alpha), static_cast<Value>(beta));
      SPMVD_CUDA_CHECK_LAUNCH();
    }
  }

  Precision precision() const noexcept override { return precision_of<Value>(); }
  std::size_t device_bytes() const noexcept override {
    return permutation_.bytes() + csr_row_offsets_.bytes() + csr_col_indices_.bytes() +
           csr_values_.bytes() + ell_lengths_.bytes() + ell_col_indices_.bytes() +
           ell_values_.bytes();
  }

 private:
  // The warp rows [block_rows, separator): their offsets index the CSR part's arrays from 0.
  void launch_csr(const void* x, void* y, double alpha, double beta) {
    csr_vector_detail::launch_csr_vector<Value>(
        "cuda_strip", params_.csr_threads_per_row, csr_grid_, params_.csr_block_size, stream_,
        separator_ - block_rows_, csr_row_offsets_.as<const std::int64_t>() + block_rows_,
        csr_col_indices_.as<const std::int32_t>(), csr_values_.as<const Value>(),
        static_cast<const Value*>(x), static_cast<Value*>(y), static_cast<Value>(alpha),
        static_cast<Value>(beta),
        csr_vector_detail::PermutedRows{permutation_.as<const std::int32_t>() + block_rows_});
  }

  void launch_block_rows(const void* x, void* y, double alpha, double beta) {
    switch (params_.csr_block_size) {
      case 128:
        return launch_block_rows<128>(x, y, alpha, beta);
      case 256:
        return launch_block_rows<256>(x, y, alpha, beta);
      case 512:
        return launch_block_rows<512>(x, y, alpha, beta);
      default:  // build() admits only kCsrVectorBlockSizes, each a case above
        throw Error(ErrorCode::internal, "cuda_strip: csr_block_size " +
                                             std::to_string(params_.csr_block_size) +
                                             " has no compiled block-row kernel");
    }
  }

  template <int BlockSize>
  void launch_block_rows(const void* x, void* y, double alpha, double beta) {
    strip_block_row_kernel<Value, BlockSize>
        <<<static_cast<unsigned>(block_rows_), BlockSize, 0, stream_>>>(
            csr_row_offsets_.as<const std::int64_t>(), csr_col_indices_.as<const std::int32_t>(),
            csr_values_.as<const Value>(), permutation_.as<const std::int32_t>(),
            static_cast<const Value*>(x), static_cast<Value*>(y), static_cast<Value>(alpha),
            static_cast<Value>(beta));
    SPMVD_CUDA_CHECK_LAUNCH();
  }

  std::int64_t rows_;
  std::int64_t separator_;
  std::int64_t block_rows_;
  CudaStripParams params_;
  std::uint32_t csr_grid_;
  std::uint32_t ell_grid_;
  cudaStream_t stream_;
  DeviceBuffer permutation_;
  DeviceBuffer csr_row_offsets_;
  DeviceBuffer csr_col_indices_;
  DeviceBuffer csr_values_;
  DeviceBuffer ell_lengths_;
  DeviceBuffer ell_col_indices_;
  DeviceBuffer ell_values_;
};

template <typename Value>
std::unique_ptr<SpmvOperator> build_as(const CsrMatrix<double>& matrix,
                                       const CudaStripParams& params, Device& device) {
  return std::make_unique<CudaStripOperator<Value>>(
      without_device_lock([&] { return make_strip_layout<Value>(matrix, params.separator); }),
      params, device);
}

}  // namespace

std::unique_ptr<SpmvOperator> CudaStripRules::build(const CsrMatrix<double>& matrix,
                                                    Precision precision,
                                                    const Candidate& candidate, Device& device) {
  check_candidate_format("cuda_strip", kCudaStripFormatId, candidate);
  const CudaStripParams params = params_of(candidate);
  check_one_of("cuda_strip", "csr_threads_per_row", params.csr_threads_per_row,
               kCsrVectorThreadsPerRow);
  // The CSR kernel's warp-uniform loop needs whole warps per block.
  check_one_of("cuda_strip", "csr_block_size", params.csr_block_size, kCsrVectorBlockSizes);
  check_one_of("cuda_strip", "ell_block_size", params.ell_block_size, kEllBlockSizes);
  if (params.separator <= 0 || params.separator >= matrix.rows)
    throw_invalid("cuda_strip: separator " + std::to_string(params.separator) +
                  " is not strictly inside the matrix's " + std::to_string(matrix.rows) +
                  " rows");
  if (params.block_rows < 0 || params.block_rows > params.separator)
    throw_invalid("cuda_strip: block_rows " + std::to_string(params.block_rows) +
                  " is not inside [0, separator " + std::to_string(params.separator) + "]");
  check_gpu_device("cuda_strip", device);
  if (precision == Precision::fp32) return build_as<float>(matrix, params, device);
  return build_as<double>(matrix, params, device);
}

}  // namespace spmvd
