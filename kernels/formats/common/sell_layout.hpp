#pragma once
// Host-side sliced ELL layout (SELL-C-sigma, Kreutzer et al., "A unified sparse matrix data
// format for efficient general sparse matrix-vector multiplication on modern processors with
// wide SIMD units", SISC 2014): rows are sorted by length, descending, within windows of sigma
// consecutive rows, then cut into slices of C rows; each slice is padded to its longest row and
// stored column-major (entry j of the slice's row i at slice_offset + j*C + i), so the C threads
// of a slice read consecutive addresses. The last slice is padded to C rows as well.
//
// ELL (column-major, one width) is the special case of one slice holding every row, sigma 1.
// The padding convention (column -1, value 0) is cuSPARSE's (cusparseCreateSlicedEll), so the
// same arrays serve cuda_sell, cuda_ell and cusparse_sell.

#include <cstdint>
#include <span>
#include <vector>

#include "core/csr_matrix.hpp"

namespace spmvd {

// Column index of a padding slot. Padding always follows a row's real entries, so a kernel
// stops at the first one: it then reads neither the padding's value nor x.
inline constexpr ColIndex kPaddingColumn = -1;

template <typename Value>
struct SellLayout {
  std::int64_t rows = 0;
  std::int64_t slice_height = 0;            // C
  std::vector<std::int64_t> slice_offsets;  // ceil(rows / C) + 1 entries, in slots
  std::vector<ColIndex> col_indices;        // slice_offsets.back() slots, padding kPaddingColumn
  std::vector<Value> values;                // slice_offsets.back() slots, padding 0
  // permutation[i] = the caller's row stored at sorted position i; empty when no row moved
  // (sort_window <= 1), in which case position i is row i.
  std::vector<std::int32_t> permutation;

  std::int64_t slots() const noexcept { return slice_offsets.empty() ? 0 : slice_offsets.back(); }
};

// The row order of SELL-C-sigma: a stable sort by length, descending, within each window of
// sort_window consecutive rows (sort_window <= 1: identity): core's length_sorted_row_order,
// the order the features' sorted gathers are counted in.
std::vector<std::int32_t> sell_row_order(const CsrMatrix<double>& matrix, std::int64_t sort_window);

// The matrix's longest row (0 without rows): its rows side by side (oneTBB).
std::int64_t longest_row(const CsrMatrix<double>& matrix);

// Each slice's first slot, ceil(rows / C) + 1 entries (the last is every slot): slice s holds
// the C rows order[s C ..] (the rows in their own order where order is empty), each padded to
// the longest of them. O(rows), the slices side by side and the rows of a long slice too
// (oneTBB: ELL is one slice of every row, and this was most of its device build).
std::vector<std::int64_t> sell_slice_offsets(const CsrMatrix<double>& matrix,
                                             std::int64_t slice_height,
                                             std::span<const std::int32_t> order);

// Throws Error(invalid_argument) for slice_height < 1 or rows >= 2^31.
template <typename Value>
SellLayout<Value> make_sell_layout(const CsrMatrix<double>& matrix, std::int64_t slice_height,
                                   std::int64_t sort_window);

}  // namespace spmvd
