#include "kernels/formats/common/sell_layout.hpp"

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
  const std::int64_t slices = (matrix.rows + slice_height - 1) / slice_height;

  sell.slice_offsets.assign(static_cast<std::size_t>(slices) + 1, 0);
  for (std::int64_t s = 0; s < slices; ++s) {
    std::int64_t width = 0;
    for (std::int64_t i = s * slice_height; i < std::min(matrix.rows, (s + 1) * slice_height); ++i)
      width = std::max(width, matrix.row_length(order[i]));
    sell.slice_offsets[s + 1] = sell.slice_offsets[s] + width * slice_height;
  }

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
