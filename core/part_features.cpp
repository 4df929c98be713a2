#include "core/part_features.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include "core/error.hpp"

namespace spmvd {

MatrixFeatures part_features(const MatrixFeatures& whole,
                             std::vector<RowLengthCount> distribution, std::int64_t empty_rows) {
  if (empty_rows < 0)
    throw Error(ErrorCode::invalid_argument,
                "part_features: empty_rows is " + std::to_string(empty_rows));
  // Merge equal lengths so that the DF has the ascending, one-entry-per-length shape that
  // feature extraction gives a whole matrix.
  std::map<std::int64_t, std::int64_t> rows_of_length;
  for (const RowLengthCount& c : distribution) {
    if (c.length <= 0 || c.rows < 0)
      throw Error(ErrorCode::invalid_argument,
                  "part_features: row vector set of length " + std::to_string(c.length) +
                      " with " + std::to_string(c.rows) + " rows");
    if (c.rows > 0) rows_of_length[c.length] += c.rows;
  }
  MatrixFeatures f;
  f.cols = whole.cols;
  f.mean_row_span_fraction = whole.mean_row_span_fraction;
  f.x_sectors_per_nonzero = whole.x_sectors_per_nonzero;
  f.empty_rows = empty_rows;
  f.rows = empty_rows;
  double sum_squares = 0.0;
  for (const auto& [length, rows] : rows_of_length) {
    f.distribution.push_back({length, rows});
    f.rows += rows;
    f.nnz += length * rows;
    sum_squares += static_cast<double>(length) * static_cast<double>(length) *
                   static_cast<double>(rows);
  }
  if (f.rows == 0) return f;
  f.row_length_min = empty_rows > 0 || f.distribution.empty() ? 0 : f.distribution.front().length;
  f.row_length_max = f.distribution.empty() ? 0 : f.distribution.back().length;
  const double rows = static_cast<double>(f.rows);
  f.row_length_mean = static_cast<double>(f.nnz) / rows;
  f.row_length_stddev =
      std::sqrt(std::max(0.0, sum_squares / rows - f.row_length_mean * f.row_length_mean));
  return f;
}

TruncatedDistribution truncate_distribution(const std::vector<RowLengthCount>& distribution,
                                            std::int64_t width) {
  if (width < 0)
    throw Error(ErrorCode::invalid_argument,
                "truncate_distribution: width is " + std::to_string(width));
  TruncatedDistribution out;
  std::int64_t rows_at_width = 0;
  for (const RowLengthCount& c : distribution) {
    if (c.length < width) {
      if (c.length > 0) out.kept.push_back(c);
      continue;
    }
    rows_at_width += c.rows;
    if (c.length > width) out.remainder.push_back({c.length - width, c.rows});
  }
  if (width > 0 && rows_at_width > 0) out.kept.push_back({width, rows_at_width});
  return out;
}

}  // namespace spmvd
