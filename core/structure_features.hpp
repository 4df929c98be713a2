#pragma once
// The structural features that need more than row lengths (core/matrix_features.hpp): x
// gathers per group of rows, in the matrix's order or another, and the order of a sort by row
// length. Shared by the tuner's feature extraction, the formats' own feature hooks and the
// calibration samples, so that a sample and a user's matrix are described by the same code.

#include <cstdint>
#include <span>
#include <vector>

#include "core/csr_matrix.hpp"
#include "core/matrix_features.hpp"

namespace spmvd {

// MatrixFeatures::x_sectors_per_nonzero: per group of kXGatherGroupRows rows, its distinct
// columns / kXSectorColumns. O(nnz), a bitmap of cols / 64 bytes; 0 without non-zeros.
template <typename Value>
double x_sectors_per_nonzero(const CsrMatrix<Value>& m);

// The same of the rows visited in `order` (a permutation of the rows): its groups are
// kXGatherGroupRows consecutive entries of the order.
template <typename Value>
double x_sectors_per_nonzero(const CsrMatrix<Value>& m, std::span<const std::int32_t> order);

// The rows in the order of a stable sort by descending length within each window of
// sort_window consecutive rows (the last may be shorter); the identity for sort_window <= 1.
// Rows of equal length keep their relative order. SELL-C-sigma's row order (cuda_sell).
// O(rows log sort_window); for the whole matrix a counting sort over chunks of rows in
// parallel, O(rows + chunks * longest row).
template <typename Value>
std::vector<std::int32_t> length_sorted_row_order(const CsrMatrix<Value>& m,
                                                  std::int64_t sort_window);

}  // namespace spmvd
