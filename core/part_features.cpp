#include "core/part_features.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/error.hpp"

namespace spmvd {
namespace {

// The DF's shape as feature extraction gives it: ascending lengths, one entry per length, no
// set of 0 rows. The composed formats price thousands of parts per matrix (BCE's OPA prices
// every block of up to 128 groups), each a slice of the whole DF that already has this shape:
// checked in one pass and kept as it is, sorted and merged in place otherwise (a std::map here
// was 40 % of ranking a power-law matrix, 2026-11-24, bench/ranking-timing).
std::vector<RowLengthCount> ascending_unique_lengths(std::vector<RowLengthCount> sets) {
  std::erase_if(sets, [](const RowLengthCount& c) { return c.rows == 0; });
  const auto ascending = [](const RowLengthCount& a, const RowLengthCount& b) {
    return a.length < b.length;
  };
  const auto not_strictly_ascending = [](const RowLengthCount& a, const RowLengthCount& b) {
    return a.length >= b.length;
  };
  if (std::adjacent_find(sets.begin(), sets.end(), not_strictly_ascending) == sets.end())
    return sets;
  std::stable_sort(sets.begin(), sets.end(), ascending);
  std::vector<RowLengthCount> merged;
  merged.reserve(sets.size());
  for (const RowLengthCount& c : sets) {
    if (!merged.empty() && merged.back().length == c.length)
      merged.back().rows += c.rows;
    else
      merged.push_back(c);
  }
  return merged;
}

}  // namespace

MatrixFeatures part_features(const MatrixFeatures& whole,
                             std::vector<RowLengthCount> distribution, std::int64_t empty_rows) {
  if (empty_rows < 0)
    throw Error(ErrorCode::invalid_argument,
                "part_features: empty_rows is " + std::to_string(empty_rows));
  for (const RowLengthCount& c : distribution) {
    if (c.length <= 0 || c.rows < 0)
      throw Error(ErrorCode::invalid_argument,
                  "part_features: row vector set of length " + std::to_string(c.length) +
                      " with " + std::to_string(c.rows) + " rows");
  }
  MatrixFeatures f;
  f.cols = whole.cols;
  f.mean_row_span_fraction = whole.mean_row_span_fraction;
  f.x_sectors_per_nonzero = whole.x_sectors_per_nonzero;
  f.empty_rows = empty_rows;
  f.rows = empty_rows;
  f.distribution = ascending_unique_lengths(std::move(distribution));
  double sum_squares = 0.0;
  for (const auto& [length, rows] : f.distribution) {
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
