#pragma once
// The features of a part of a matrix made of some of its rows (the blocks, strips and splits
// of the composed formats, kernels/format_parts.hpp), from the part's row-length distribution
// alone: the papers' partitions are decided on the DF, before any row moves.

#include <cstdint>
#include <vector>

#include "core/matrix_features.hpp"

namespace spmvd {

// rows, nnz, the row-length statistics and the DF from `distribution` (non-empty row vector
// sets, any order, lengths > 0) plus `empty_rows` rows of length 0; cols and the x-locality
// measures from `whole` (a part gathers from the same x, and a part of the rows of a matrix is
// judged as local as the matrix: the models have no finer measure). No format features: a
// part is run as a format whose hook did not see it. Throws Error(invalid_argument) on a
// length <= 0, a negative count or negative empty_rows.
MatrixFeatures part_features(const MatrixFeatures& whole,
                             std::vector<RowLengthCount> distribution,
                             std::int64_t empty_rows = 0);

// The DF of the rows of `whole` with every row cut to at most `width` entries (paper 003's
// ELL part of width K; Eqs. 2-4), and of what the cut leaves (the COO part's row lengths).
struct TruncatedDistribution {
  std::vector<RowLengthCount> kept;       // min(length, width) per row, rows of length 0 dropped
  std::vector<RowLengthCount> remainder;  // length - width for the rows longer than width
};
// Throws Error(invalid_argument) on a negative width.
TruncatedDistribution truncate_distribution(const std::vector<RowLengthCount>& distribution,
                                            std::int64_t width);

}  // namespace spmvd
