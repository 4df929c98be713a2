#pragma once
// A built BRO-ELL or BRO-COO layout on the device and its launch: cuda_bro_ell and cuda_bro_coo
// are one part each, cuda_bro_hyb is both (its ELL part first, then its COO part adds).

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "kernels/cuda/cuda_check.cuh"
#include "kernels/device.hpp"
#include "kernels/formats/common/bro_stream.cuh"
#include "kernels/formats/common/bro_stream.hpp"

namespace spmvd::bro_detail {

template <typename Value>
class BroEllPart {
 public:
  // `order`: the row order (empty: none); threads_per_row: stream rows per matrix row.
  BroEllPart(const bro::BroEllLayout<Value>& layout, const std::vector<std::int32_t>& order,
             std::uint32_t threads_per_row, std::uint32_t block_size, std::uint32_t grid_size,
             Device& device)
      : stream_rows_(layout.rows),
        slice_height_(layout.slice_height),
        words_per_symbol_(layout.words_per_symbol),
        threads_per_row_(threads_per_row),
        block_size_(block_size),
        grid_size_(grid_size),
        col_offsets_(upload(device, layout.col_offsets.data(), layout.col_offsets.size())),
        word_offsets_(upload(device, layout.word_offsets.data(), layout.word_offsets.size())),
        bit_alloc_(upload(device, layout.bit_alloc.data(), layout.bit_alloc.size())),
        stream_(upload(device, layout.stream.data(), layout.stream.size())),
        values_(upload(device, layout.values.data(), layout.values.size())),
        order_(upload(device, order.data(), order.size())) {}

  // y[order[r]] = alpha * (A x)[r] + beta * y[order[r]] for every row.
  void launch(const Value* x, Value* y, Value alpha, Value beta, cudaStream_t stream) const {
    if (stream_rows_ == 0) return;
    switch (words_per_symbol_ * 16 + threads_per_row_) {
      case 1 * 16 + 1:
        return run<1, 1>(x, y, alpha, beta, stream);
      case 4 * 16 + 1:
        return run<4, 1>(x, y, alpha, beta, stream);
      case 4 * 16 + 4:
        return run<4, 4>(x, y, alpha, beta, stream);
      default:
        throw_invalid("bro-ell: no kernel for " + std::to_string(words_per_symbol_) +
                      "-word symbols and " + std::to_string(threads_per_row_) + " threads per row");
    }
  }

  std::size_t bytes() const noexcept {
    return col_offsets_.bytes() + word_offsets_.bytes() + bit_alloc_.bytes() + stream_.bytes() +
           values_.bytes() + order_.bytes();
  }
  // The row order on the device (nullptr without one): a symmetric reordering gathers x with it.
  const std::int32_t* order() const noexcept {
    return order_.bytes() ? order_.as<const std::int32_t>() : nullptr;
  }

 private:
  template <int kWords, int kLanes>
  void run(const Value* x, Value* y, Value alpha, Value beta, cudaStream_t stream) const {
    bro_ell_kernel<Value, kWords, kLanes><<<grid_size_, block_size_, 0, stream>>>(
        stream_rows_, slice_height_, col_offsets_.as<const std::int64_t>(),
        word_offsets_.as<const std::int64_t>(), bit_alloc_.as<const std::uint8_t>(),
        stream_.as<const std::uint32_t>(), values_.as<const Value>(),
        order_.bytes() ? order_.as<const std::int32_t>() : nullptr, x, y, alpha, beta);
    SPMVD_CUDA_CHECK_LAUNCH();
  }

  std::int64_t stream_rows_;
  std::int64_t slice_height_;
  std::uint32_t words_per_symbol_;
  std::uint32_t threads_per_row_;
  std::uint32_t block_size_;
  std::uint32_t grid_size_;
  DeviceBuffer col_offsets_;
  DeviceBuffer word_offsets_;
  DeviceBuffer bit_alloc_;
  DeviceBuffer stream_;
  DeviceBuffer values_;
  DeviceBuffer order_;
};

template <typename Value>
class BroCooPart {
 public:
  BroCooPart(const bro::BroCooLayout<Value>& layout, std::uint32_t block_size, Device& device)
      : nnz_(layout.nnz),
        interval_entries_(std::int64_t{32} * layout.interval_rounds),
        intervals_(layout.intervals()),
        block_size_(block_size),
        first_rows_(upload(device, layout.first_rows.data(), layout.first_rows.size())),
        last_rows_(upload(device, layout.last_rows.data(), layout.last_rows.size())),
        bits_(upload(device, layout.bits.data(), layout.bits.size())),
        word_offsets_(upload(device, layout.word_offsets.data(), layout.word_offsets.size())),
        stream_(upload(device, layout.stream.data(), layout.stream.size())),
        col_indices_(upload(device, layout.col_indices.data(), layout.col_indices.size())),
        values_(upload(device, layout.values.data(), layout.values.size())) {}

  // y += alpha * A x.
  void launch(const Value* x, Value* y, Value alpha, cudaStream_t stream) const {
    if (intervals_ == 0) return;
    const std::int64_t warps_per_block = block_size_ / 32;
    // One warp an interval (Sec. 3.2), capped at CUDA's grid limit (the kernel grid-strides).
    const auto blocks = static_cast<unsigned>(std::min<std::int64_t>(
        (intervals_ + warps_per_block - 1) / warps_per_block, std::int64_t{1} << 30));
    bro_coo_kernel<Value><<<blocks, block_size_, 0, stream>>>(
        nnz_, interval_entries_, intervals_, first_rows_.as<const std::int32_t>(),
        last_rows_.as<const std::int32_t>(), bits_.as<const std::uint8_t>(),
        word_offsets_.as<const std::int64_t>(), stream_.as<const std::uint32_t>(),
        col_indices_.as<const std::int32_t>(), values_.as<const Value>(), x, y, alpha);
    SPMVD_CUDA_CHECK_LAUNCH();
  }

  std::size_t bytes() const noexcept {
    return first_rows_.bytes() + last_rows_.bytes() + bits_.bytes() + word_offsets_.bytes() +
           stream_.bytes() + col_indices_.bytes() + values_.bytes();
  }

 private:
  std::int64_t nnz_;
  std::int64_t interval_entries_;
  std::int64_t intervals_;
  std::uint32_t block_size_;
  DeviceBuffer first_rows_;
  DeviceBuffer last_rows_;
  DeviceBuffer bits_;
  DeviceBuffer word_offsets_;
  DeviceBuffer stream_;
  DeviceBuffer col_indices_;
  DeviceBuffer values_;
};

}  // namespace spmvd::bro_detail
