#pragma once
// Queries on the row-length distribution f_A of paper 000 (Sec. 4.1), as stored in
// MatrixFeatures: the padded sizes of ELL, HYB, SELL and the BSR fill bound follow from it
// without reading the matrix. Each query is O(distinct row lengths).

#include <cstdint>

#include "core/matrix_features.hpp"

namespace spmvd {

// Whether the distribution accounts for every non-zero (sum of length * rows == nnz). Features
// extracted from a matrix always do; hand-written ones may leave the distribution out, and the
// rules then fall back to bounds that need only rows, nnz and the longest row.
bool distribution_covers_nnz(const MatrixFeatures& features);

// Rows with at least `length` non-zeros (empty rows included when length <= 0).
std::int64_t rows_with_length_at_least(const MatrixFeatures& features, std::int64_t length);

// Sum over rows of max(0, length - width): the entries a width-`width` ELL part leaves over.
std::int64_t entries_beyond_width(const MatrixFeatures& features, std::int64_t width);

// With the rows sorted by length descending and cut into groups of `group_rows`, the sum over
// groups of ceil(longest row of the group / divisor). With divisor 1 this is the sum of slice
// widths of a fully sorted SELL (sigma >= rows); it is the least such sum over every grouping of
// the rows, since sorting minimises the sum of group maxima.
std::int64_t sorted_group_leader_sum(const MatrixFeatures& features, std::int64_t group_rows,
                                     std::int64_t divisor = 1);

// Sum of the `count` longest row lengths: the most that `count` disjoint groups' longest rows
// can add up to, whatever the row order.
std::int64_t longest_rows_length_sum(const MatrixFeatures& features, std::int64_t count);

}  // namespace spmvd
