#include "kernels/formats/common/padding_stop_walk.hpp"

#include <algorithm>
#include <cmath>

namespace spmvd {

std::vector<RowLengthCount> padding_stop_walks(std::span<const RowLengthCount> sets,
                                               std::int64_t width, std::int64_t group) {
  std::vector<RowLengthCount> out;
  out.reserve(sets.size());
  for (const RowLengthCount& set : sets) {
    const std::int64_t walked =
        set.length >= width ? width : std::min(width, group * (set.length / group + 1));
    if (!out.empty() && out.back().length == walked)
      out.back().rows += set.rows;
    else
      out.push_back({walked, set.rows});
  }
  return out;
}

double expected_warp_walk(std::span<const RowLengthCount> sets, double independent_rows) {
  std::int64_t rows = 0;
  for (const RowLengthCount& set : sets) rows += set.rows;
  if (rows == 0) return 0;
  double walked = 0, below = 0, cumulative = 0;
  for (const RowLengthCount& set : sets) {
    cumulative += static_cast<double>(set.rows) / static_cast<double>(rows);
    const double at_most = std::pow(std::min(cumulative, 1.0), independent_rows);
    walked += static_cast<double>(set.length) * (at_most - below);
    below = at_most;
  }
  return walked;
}

std::int64_t cut_ell_walked_width(const MatrixFeatures& features, std::int64_t width) {
  if (features.distribution.empty()) return width;
  std::vector<RowLengthCount> rows;
  if (features.empty_rows > 0) rows.push_back({0, features.empty_rows});
  rows.insert(rows.end(), features.distribution.begin(), features.distribution.end());
  const double walked = expected_warp_walk(padding_stop_walks(rows, width, 4), 32.0);
  return std::max<std::int64_t>(1, std::llround(walked));
}

std::int64_t ell_walked_width(const MatrixFeatures& features, std::int64_t width) {
  return features.row_length_max > width ? width : cut_ell_walked_width(features, width);
}

}  // namespace spmvd
