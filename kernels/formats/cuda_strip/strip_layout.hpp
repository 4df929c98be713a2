#pragma once
// Host-side layout of cuda_strip (paper 004 Sec. 5): the rows sorted by length, descending, by
// a stable counting sort (core's length_sorted_row_order over all rows: equal lengths keep the
// caller's order, so the layout is deterministic); sorted rows [0, separator) as CSR, sorted
// rows [separator, rows) as column-major ELL as wide as its first row (entry j of ELL row i at
// j * ell_rows + i, padding column kPaddingColumn, value 0), with each row's own length so the
// kernel stops there without a per-entry test.

#include <cstdint>
#include <vector>

#include "core/csr_matrix.hpp"

namespace spmvd {

template <typename Value>
struct StripLayout {
  std::int64_t rows = 0;
  std::int64_t separator = 0;  // sorted rows above: CSR
  // permutation[i] = the caller's row at sorted position i (rows entries).
  std::vector<std::int32_t> permutation;
  // CSR part: sorted rows [0, separator).
  std::vector<std::int64_t> csr_row_offsets;  // separator + 1 entries, from 0
  std::vector<ColIndex> csr_col_indices;
  std::vector<Value> csr_values;
  // ELL part: sorted rows [separator, rows), ell_rows() of them.
  std::int64_t ell_width = 0;             // the length of its first row (0 without rows)
  std::vector<std::int32_t> ell_lengths;  // each row's own length, non-increasing
  std::vector<ColIndex> ell_col_indices;  // ell_rows() * ell_width slots, column-major
  std::vector<Value> ell_values;

  std::int64_t ell_rows() const noexcept { return rows - separator; }
};

// Throws Error(invalid_argument) when separator is outside [0, rows] or rows >= 2^31.
template <typename Value>
StripLayout<Value> make_strip_layout(const CsrMatrix<double>& matrix, std::int64_t separator);

}  // namespace spmvd
