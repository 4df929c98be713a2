#include "partition/strip_partition.hpp"

#include <string>
#include <vector>

#include "core/error.hpp"

namespace spmvd {

std::int64_t strip_rows_from_occupancy(const Occupancy& occupancy, const DeviceInfo& device,
                                       int threads_per_row) {
  if (threads_per_row <= 0 || occupancy.active_blocks_per_sm <= 0) {
    throw_invalid("strip_rows_from_occupancy: needs threads_per_row > 0 (got " +
                  std::to_string(threads_per_row) + ") and a kernel that launches (P = " +
                  std::to_string(occupancy.active_blocks_per_sm) + ")");
  }
  const std::int64_t resident_threads = static_cast<std::int64_t>(occupancy.active_blocks_per_sm) *
                                        device.sm_count * occupancy.warps_per_block *
                                        device.warp_size;
  const std::int64_t rows = resident_threads / threads_per_row;
  if (rows <= 0) {
    throw_invalid("strip_rows_from_occupancy: " + std::to_string(resident_threads) +
                  " resident threads hold no row of " + std::to_string(threads_per_row) +
                  " threads");
  }
  return rows;
}

std::vector<SortedRowsPart> sorted_strips(const RowLengthDistribution& df,
                                          std::int64_t strip_rows) {
  if (strip_rows <= 0) {
    throw_invalid("sorted_strips: strip_rows " + std::to_string(strip_rows) + " is not positive");
  }
  std::vector<SortedRowsPart> strips;
  strips.reserve(static_cast<std::size_t>((df.rows + strip_rows - 1) / strip_rows));
  // Walk the sets from the longest down, then the empty rows, strip_rows at a time.
  auto set = df.sets.rbegin();
  std::int64_t left_in_set = set != df.sets.rend() ? set->rows : 0;
  std::int64_t empty_left = df.empty_rows;
  for (std::int64_t first = 0; first < df.rows; first += strip_rows) {
    SortedRowsPart strip{.first_row = first};
    std::int64_t wanted = std::min(strip_rows, df.rows - first);
    while (wanted > 0 && set != df.sets.rend()) {
      if (strip.rows == 0) strip.width = set->length;
      const std::int64_t take = std::min(wanted, left_in_set);
      strip.rows += take;
      strip.nnz += take * set->length;
      wanted -= take;
      left_in_set -= take;
      if (left_in_set == 0 && ++set != df.sets.rend()) left_in_set = set->rows;
    }
    const std::int64_t empty = std::min(wanted, empty_left);
    strip.rows += empty;
    empty_left -= empty;
    strips.push_back(strip);
  }
  return strips;
}

StripPartition strip_partition(const RowLengthDistribution& df, const StripPartitionCosts& costs,
                               const StripPartitionOptions& options) {
  if (!costs.csr_vector_strip_ms || !costs.ell_part_ms) {
    throw_invalid("strip_partition: both the CSR vector and the ELL time callables must be set");
  }
  if (!(options.min_gain_fraction >= 0.0 && options.min_gain_fraction < 1.0)) {
    throw_invalid("strip_partition: min_gain_fraction " +
                  std::to_string(options.min_gain_fraction) + " is outside [0, 1)");
  }
  const std::vector<SortedRowsPart> strips = sorted_strips(df, options.strip_rows);
  StripPartition best{.rows = df.rows};
  if (strips.empty()) return best;

  // Separator below strip s (s strips above): CSR = sum of the first s strips; ELL = the rest
  // as one part, as wide as its first row.
  const auto s_count = static_cast<std::int64_t>(strips.size());
  std::vector<double> csr_prefix_ms(s_count + 1, 0.0);
  for (std::int64_t s = 0; s < s_count; ++s) {
    csr_prefix_ms[s + 1] = csr_prefix_ms[s] + costs.csr_vector_strip_ms(strips[s]);
  }
  std::vector<StripPartition> candidates(s_count + 1);
  std::int64_t nnz_below = df.nnz;
  for (std::int64_t s = 0; s <= s_count; ++s) {
    StripPartition& c = candidates[s];
    c.rows = df.rows;
    c.separator_row = s < s_count ? strips[s].first_row : df.rows;
    c.csr_vector_ms = csr_prefix_ms[s];
    if (s < s_count) {
      const SortedRowsPart below{.first_row = c.separator_row,
                                 .rows = df.rows - c.separator_row,
                                 .nnz = nnz_below,
                                 .width = strips[s].width};
      c.ell_ms = costs.ell_part_ms(below);
      nnz_below -= strips[s].nnz;
    }
    c.total_ms = c.csr_vector_ms + c.ell_ms;
  }

  const StripPartition& all_ell = candidates.front();
  const StripPartition& all_csr = candidates.back();
  // The better single format; on a tie, all ELL (the separator at the top).
  best = all_csr.total_ms < all_ell.total_ms ? all_csr : all_ell;
  const double split_must_beat = best.total_ms * (1.0 - options.min_gain_fraction);
  const StripPartition* best_split = nullptr;
  for (std::int64_t s = 1; s < s_count; ++s) {
    if (best_split == nullptr || candidates[s].total_ms < best_split->total_ms) {
      best_split = &candidates[s];
    }
  }
  if (best_split != nullptr && best_split->total_ms < split_must_beat) best = *best_split;
  return best;
}

}  // namespace spmvd
