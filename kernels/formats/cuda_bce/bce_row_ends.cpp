#include "kernels/formats/cuda_bce/bce_row_ends.hpp"

#include <algorithm>
#include <cmath>

namespace spmvd {

namespace {

// Appends `set`, merged into the last set where the lengths meet (the input is ascending).
void append_merged(std::vector<RowLengthCount>& out, RowLengthCount set) {
  if (!out.empty() && out.back().length == set.length)
    out.back().rows += set.rows;
  else
    out.push_back(set);
}

}  // namespace

std::vector<RowLengthCount> bce_walked_rows(std::span<const RowLengthCount> sets,
                                            std::int64_t walkers) {
  std::vector<RowLengthCount> out;
  out.reserve(sets.size());
  for (const RowLengthCount& set : sets)
    append_merged(out, {(set.length + walkers - 1) / walkers, set.rows * walkers});
  return out;
}

double bce_warp_walked_width(std::span<const RowLengthCount> sets, std::int32_t lanes) {
  std::int64_t rows = 0;
  for (const RowLengthCount& set : sets) rows += set.rows;
  if (rows == 0) return 0;
  const double independent_rows = 32.0 / lanes;
  double walked = 0, below = 0, cumulative = 0;
  for (const RowLengthCount& set : sets) {
    cumulative += static_cast<double>(set.rows) / static_cast<double>(rows);
    const double at_most = std::pow(std::min(cumulative, 1.0), independent_rows);
    walked += static_cast<double>(set.length) * (at_most - below);
    below = at_most;
  }
  return walked;
}

std::vector<RowLengthCount> bce_padding_stop_lengths(std::span<const RowLengthCount> sets,
                                                     std::int32_t lanes) {
  std::vector<RowLengthCount> out;
  if (sets.empty()) return out;
  const std::int64_t shortest = sets.front().length, width = sets.back().length;
  const std::int64_t group = 4 * std::int64_t{lanes};
  for (const RowLengthCount& set : sets) {
    const std::int64_t walked =
        set.length >= width ? width
                            : std::min(width, shortest + group * ((set.length - shortest) / group + 1));
    append_merged(out, {walked, set.rows});
  }
  return out;
}

bool bce_block_reads_lengths(std::span<const RowLengthCount> sets, std::int32_t lanes) {
  if (sets.size() <= 1) return false;
  if (lanes > 4) return true;
  // Slots a walked row (bce_walked_rows: lanes of them a row) reads past its row's end.
  const double extra_slots =
      bce_warp_walked_width(bce_walked_rows(bce_padding_stop_lengths(sets, lanes), lanes),
                            lanes) -
      bce_warp_walked_width(bce_walked_rows(sets, lanes), lanes);
  const double padding_bytes_a_row =
      extra_slots * lanes * static_cast<double>(sizeof(std::int32_t) + sizeof(double));
  return padding_bytes_a_row > static_cast<double>(sizeof(std::int32_t));
}

}  // namespace spmvd
