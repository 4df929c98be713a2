#include "kernels/formats/cusparse_bsr/bsr_layout.hpp"

#include <algorithm>
#include <limits>
#include <string>

#include "core/error.hpp"

namespace spmvd {
namespace {

void check_block_dim(std::int64_t block_dim) {
  if (block_dim < 1) throw_invalid("bsr layout: block_dim " + std::to_string(block_dim) + " < 1");
}

// Calls visit(block_row, sorted block columns of that block row) for every block row. `seen`
// marks a block column by the block row that last saw it, so no reset is needed between rows.
template <typename Visit>
void for_each_block_row(const CsrMatrix<double>& m, std::int64_t b, Visit&& visit) {
  const std::int64_t block_rows = (m.rows + b - 1) / b, block_cols = (m.cols + b - 1) / b;
  std::vector<std::int64_t> seen(static_cast<std::size_t>(block_cols), -1);
  std::vector<std::int32_t> columns;
  for (std::int64_t br = 0; br < block_rows; ++br) {
    columns.clear();
    for (std::int64_t r = br * b; r < std::min(m.rows, (br + 1) * b); ++r)
      for (RowOffset k = m.row_offsets[r]; k < m.row_offsets[r + 1]; ++k) {
        const std::int64_t bc = m.col_indices[k] / b;
        if (seen[bc] == br) continue;
        seen[bc] = br;
        columns.push_back(static_cast<std::int32_t>(bc));
      }
    std::sort(columns.begin(), columns.end());
    visit(br, columns);
  }
}

}  // namespace

std::int64_t count_bsr_blocks(const CsrMatrix<double>& matrix, std::int64_t block_dim) {
  check_block_dim(block_dim);
  std::int64_t blocks = 0;
  for_each_block_row(matrix, block_dim,
                     [&](std::int64_t, const std::vector<std::int32_t>& columns) {
                       blocks += static_cast<std::int64_t>(columns.size());
                     });
  return blocks;
}

template <typename Value>
BsrLayout<Value> make_bsr_layout(const CsrMatrix<double>& matrix, std::int64_t block_dim) {
  check_block_dim(block_dim);
  const std::int64_t b = block_dim;
  BsrLayout<Value> bsr;
  bsr.block_dim = b;
  bsr.block_rows = (matrix.rows + b - 1) / b;
  bsr.block_cols = (matrix.cols + b - 1) / b;
  bsr.row_offsets.assign(static_cast<std::size_t>(bsr.block_rows) + 1, 0);
  // Slot of each block column in the current block row; valid only for columns just visited.
  std::vector<std::int64_t> slot_of(static_cast<std::size_t>(bsr.block_cols), 0);
  for_each_block_row(matrix, b, [&](std::int64_t br, const std::vector<std::int32_t>& columns) {
    const auto first = static_cast<std::int64_t>(bsr.col_indices.size());
    if (first + static_cast<std::int64_t>(columns.size()) >
        std::numeric_limits<std::int32_t>::max())
      throw_invalid("bsr layout: more than 2^31 - 1 blocks of " + std::to_string(b) + "x" +
                    std::to_string(b) + " (32-bit block offsets)");
    for (std::size_t i = 0; i < columns.size(); ++i)
      slot_of[columns[i]] = first + static_cast<std::int64_t>(i);
    bsr.col_indices.insert(bsr.col_indices.end(), columns.begin(), columns.end());
    bsr.values.resize(bsr.col_indices.size() * static_cast<std::size_t>(b * b), Value(0));
    for (std::int64_t r = br * b; r < std::min(matrix.rows, (br + 1) * b); ++r)
      for (RowOffset k = matrix.row_offsets[r]; k < matrix.row_offsets[r + 1]; ++k) {
        const std::int64_t c = matrix.col_indices[k];
        const std::int64_t block = slot_of[c / b];
        bsr.values[block * b * b + (r % b) * b + c % b] = static_cast<Value>(matrix.values[k]);
      }
    bsr.row_offsets[br + 1] = static_cast<std::int32_t>(bsr.col_indices.size());
  });
  return bsr;
}

template BsrLayout<float> make_bsr_layout(const CsrMatrix<double>&, std::int64_t);
template BsrLayout<double> make_bsr_layout(const CsrMatrix<double>&, std::int64_t);

}  // namespace spmvd
