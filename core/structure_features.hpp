#pragma once
// The structural features that need more than row lengths (core/matrix_features.hpp): the
// slice padding of row groups (SELL) and the block counts of BSR. Shared by the tuner's
// feature extraction and the calibration's blocked samples, so that a calibration sample and a
// user's matrix are described by the same code.

#include <cstdint>
#include <span>
#include <vector>

#include "core/csr_matrix.hpp"
#include "core/matrix_features.hpp"

namespace spmvd {

// One GroupPaddedDistribution per kFeatureGroupRows. O(rows) each.
template <typename Value>
std::vector<GroupPaddedDistribution> group_padded_distributions(const CsrMatrix<Value>& m);

// One BlockCount per kFeatureBlockDims: the b sorted rows of every block row merged into one
// run, counting distinct column / b. O(nnz * b) each, a buffer of one block row. Expects
// columns sorted within rows (validate()).
template <typename Value>
std::vector<BlockCount> block_counts(const CsrMatrix<Value>& m);

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
// O(rows log sort_window); a counting sort, O(rows + longest row), for the whole matrix.
template <typename Value>
std::vector<std::int32_t> length_sorted_row_order(const CsrMatrix<Value>& m,
                                                  std::int64_t sort_window);

// MatrixFeatures::sorted_gathers: one per distinct min(w, rows) of kFeatureSortWindows and
// rows. Each an O(nnz) pass; where every row has the same length no row moves, and the
// unsorted value is copied.
template <typename Value>
std::vector<SortedGathers> sorted_gathers(const CsrMatrix<Value>& m, double unsorted_sectors);

}  // namespace spmvd
