#pragma once
// Construction of the distribution function (DF) f_A of paper 000 (Sec. 4.1, Sec. 5.1) from a
// CSR matrix's row offsets alone: b_m = f_A(m) = the rows with exactly m non-zeros.
//
// One pass over the row offsets, parallel with oneTBB: each worker thread counts into its own
// histogram (dense for short rows, a list for the few long ones), and the histograms are merged
// at the end. O(N + M' log M') work for N rows and M' distinct row lengths, O(N / threads) span.
// Thread safety: pure function of its input.

#include <cstdint>
#include <span>
#include <vector>

#include "core/matrix_features.hpp"

namespace spmvd {

// The DF in the shape MatrixFeatures keeps it (core/matrix_features.hpp): the non-empty row
// vector sets R_m ascending in m, and the empty rows apart (paper 000 Sec. 4.1 removes zero rows
// from A and adds their zeros to y afterwards).
struct RowLengthDistribution {
  std::int64_t rows = 0;        // N, empty rows included
  std::int64_t empty_rows = 0;  // rows of length 0
  std::int64_t nnz = 0;
  std::vector<RowLengthCount> sets;  // {m, b_m} for every b_m > 0, m ascending
  friend bool operator==(const RowLengthDistribution&, const RowLengthDistribution&) = default;
};

// The DF of the matrix whose row offsets (rows + 1 entries, non-decreasing, offsets[0] == 0 is
// not required) these are. Throws Error(invalid_argument) naming the first row whose offsets
// decrease, or when `row_offsets` is empty.
RowLengthDistribution row_length_distribution(std::span<const std::int64_t> row_offsets);

// The DF as MatrixFeatures holds it (rows, cols, nnz, empty_rows, distribution and the row length
// min, max, mean and stddev that follow from it); the pattern features stay unset. For the models
// that take MatrixFeatures (models/df_split, models/blocked_ell_time_model) without a full feature
// extraction.
MatrixFeatures distribution_features(const RowLengthDistribution& df, std::int64_t cols);

}  // namespace spmvd
