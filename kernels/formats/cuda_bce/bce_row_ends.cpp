#include "kernels/formats/cuda_bce/bce_row_ends.hpp"

#include "kernels/formats/common/padding_stop_walk.hpp"

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
  return expected_warp_walk(sets, 32.0 / lanes);
}

std::vector<RowLengthCount> bce_padding_stop_lengths(std::span<const RowLengthCount> sets,
                                                     std::int32_t lanes) {
  if (sets.empty()) return {};
  return padding_stop_walks(sets, sets.front().length, sets.back().length, 4 * std::int64_t{lanes});
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
