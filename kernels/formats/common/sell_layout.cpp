#include "kernels/formats/common/sell_layout.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_reduce.h>

#include <algorithm>
#include <string>

#include "core/error.hpp"
#include "core/structure_features.hpp"

namespace spmvd {

std::vector<std::int32_t> sell_row_order(const CsrMatrix<double>& matrix,
                                         std::int64_t sort_window) {
  // The features' sorted gathers (core/structure_features.hpp) are counted in this order.
  return length_sorted_row_order(matrix, sort_window);
}

namespace {

// The longest of rows order[first .. last) (the rows themselves where order is empty): a long
// range's rows side by side (oneTBB).
std::int64_t longest_in(const CsrMatrix<double>& matrix, std::span<const std::int32_t> order,
                        std::int64_t first, std::int64_t last) {
  const auto longest = [&](std::int64_t from, std::int64_t to) {
    std::int64_t width = 0;
    for (std::int64_t i = from; i < to; ++i)
      width = std::max(width, matrix.row_length(order.empty() ? i : order[static_cast<std::size_t>(i)]));
    return width;
  };
  constexpr std::int64_t kRowsPerTask = 1 << 14;
  if (last - first <= kRowsPerTask) return longest(first, last);
  return tbb::parallel_reduce(
      tbb::blocked_range<std::int64_t>(first, last, kRowsPerTask), std::int64_t{0},
      [&](const tbb::blocked_range<std::int64_t>& rows, std::int64_t width) {
        return std::max(width, longest(rows.begin(), rows.end()));
      },
      [](std::int64_t a, std::int64_t b) { return std::max(a, b); });
}

}  // namespace

std::int64_t longest_row(const CsrMatrix<double>& matrix) {
  return longest_in(matrix, {}, 0, matrix.rows);
}

std::vector<std::int64_t> sell_slice_offsets(const CsrMatrix<double>& matrix,
                                             std::int64_t slice_height,
                                             std::span<const std::int32_t> order) {
  const std::int64_t slices = (matrix.rows + slice_height - 1) / slice_height;
  std::vector<std::int64_t> offsets(static_cast<std::size_t>(slices) + 1, 0);
  tbb::parallel_for(std::int64_t{0}, slices, [&](std::int64_t s) {
    const std::int64_t first = s * slice_height;
    offsets[static_cast<std::size_t>(s) + 1] =
        longest_in(matrix, order, first, std::min(matrix.rows, first + slice_height));
  });
  // Widths to offsets: slot counts summed in slice order.
  for (std::size_t s = 1; s < offsets.size(); ++s)
    offsets[s] = offsets[s - 1] + offsets[s] * slice_height;
  return offsets;
}

template <typename Value>
SellLayout<Value> make_sell_layout(const CsrMatrix<double>& matrix, std::int64_t slice_height,
                                   std::int64_t sort_window) {
  if (slice_height < 1)
    throw_invalid("sell layout: slice height " + std::to_string(slice_height) + " < 1");
  if (matrix.rows > kMaxDimension)
    throw_invalid("sell layout: " + std::to_string(matrix.rows) +
                  " rows do not fit the 32-bit permutation");
  SellLayout<Value> sell;
  sell.rows = matrix.rows;
  sell.slice_height = slice_height;
  const std::vector<std::int32_t> order = sell_row_order(matrix, sort_window);
  sell.slice_offsets = sell_slice_offsets(matrix, slice_height, order);

  sell.col_indices.assign(static_cast<std::size_t>(sell.slots()), kPaddingColumn);
  sell.values.assign(static_cast<std::size_t>(sell.slots()), Value(0));
  for (std::int64_t i = 0; i < matrix.rows; ++i) {
    const std::int64_t slice = i / slice_height, lane = i % slice_height;
    const std::int64_t row = order[i];
    std::int64_t slot = sell.slice_offsets[slice] + lane;
    for (RowOffset k = matrix.row_offsets[row]; k < matrix.row_offsets[row + 1];
         ++k, slot += slice_height) {
      sell.col_indices[slot] = matrix.col_indices[k];
      sell.values[slot] = static_cast<Value>(matrix.values[k]);
    }
  }
  if (sort_window > 1) sell.permutation = order;
  return sell;
}

template SellLayout<float> make_sell_layout(const CsrMatrix<double>&, std::int64_t, std::int64_t);
template SellLayout<double> make_sell_layout(const CsrMatrix<double>&, std::int64_t, std::int64_t);

}  // namespace spmvd
