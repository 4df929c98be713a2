#pragma once
// The structural features of a matrix that the tuner and the models decide from (computed by
// tuner/feature_extraction). Values do not enter: only the sparsity pattern does.

#include <cstdint>
#include <vector>

namespace spmvd {

// One row vector set of paper 000 (Sec. 4.1): b_m rows have exactly m non-zeros.
struct RowLengthCount {
  std::int64_t length = 0;  // m
  std::int64_t rows = 0;    // b_m = f_A(m)
  friend bool operator==(const RowLengthCount&, const RowLengthCount&) = default;
};

struct MatrixFeatures {
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::int64_t nnz = 0;
  std::int64_t row_length_min = 0;
  std::int64_t row_length_max = 0;
  double row_length_mean = 0.0;
  double row_length_stddev = 0.0;
  std::int64_t empty_rows = 0;
  // The distribution function f_A of paper 000 (Sec. 4.1), only the non-empty row vector sets,
  // ascending in length. Rows of length 0 are counted in empty_rows, not here.
  std::vector<RowLengthCount> distribution;
  // Mean over rows of (max column - min column + 1) / cols: a cheap x-locality measure
  // (1/cols for a diagonal, ~1 for rows that span all of x).
  double mean_row_span_fraction = 0.0;

  friend bool operator==(const MatrixFeatures&, const MatrixFeatures&) = default;
};

}  // namespace spmvd
