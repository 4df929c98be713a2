#include "kernels/formats/cuda_bce/bce_tile_runs.hpp"

#include <algorithm>

namespace spmvd {

namespace {

// The fields the kernel reads of a tile without a split row (the row base apart).
bool same_geometry(const BceTileDescriptor& a, const BceTileDescriptor& b) {
  return a.slot_base == b.slot_base && a.step == b.step && a.first_row == b.first_row &&
         a.end_row == b.end_row && a.lanes == b.lanes && a.uniform_length == b.uniform_length &&
         a.min_length == b.min_length && a.first_slot == b.first_slot && a.slot_end == b.slot_end &&
         a.block == b.block && a.pieces == b.pieces;
}

template <std::size_t N>
BceTileRunsOf<N> first_runs(const BceTileRuns& runs) {
  BceTileRunsOf<N> r;
  std::copy_n(runs.runs.begin(), N, r.runs.begin());
  r.count = runs.count;
  return r;
}

static_assert(sizeof(BceTileRunsOf<1>) == 64 && sizeof(BceTileRuns) == 456);

}  // namespace

std::optional<BceTileRuns> bce_tile_runs(std::span<const BceTileDescriptor> descriptors,
                                         std::uint32_t block_size, std::int64_t resident_threads) {
  BceTileRuns r;
  const auto tiles = static_cast<std::int32_t>(descriptors.size());
  const bool one_wave = std::int64_t{tiles} * block_size <= resident_threads;
  for (std::int32_t t = 0; t < tiles;) {
    const BceTileDescriptor& first = descriptors[static_cast<std::size_t>(t)];
    if (first.pieces != 1 || r.count == kBceMaxTileRuns) return std::nullopt;
    // The block's tiles from t on: consecutive in the grid (make_bce_tiles).
    std::int32_t end = t + 1;
    while (end < tiles && descriptors[static_cast<std::size_t>(end)].block == first.block) ++end;
    BceTileRun& run = r.runs[static_cast<std::size_t>(r.count++)];
    run = BceTileRun{.slot_base = first.slot_base,
                     .step = first.step,
                     .first_tile = t,
                     .first_row = first.first_row,
                     .end_row = descriptors[static_cast<std::size_t>(end - 1)].end_row,
                     .rows_per_tile = static_cast<std::int32_t>(block_size) / first.lanes,
                     .lanes = first.lanes,
                     .uniform_length = first.uniform_length,
                     .min_length = first.min_length,
                     .row_base = first.row_base,
                     .block = first.block};
    bool some_base = false, every_base = true;
    for (std::int32_t u = t; u < end; ++u) {
      const std::int32_t base = descriptors[static_cast<std::size_t>(u)].row_base;
      const std::int32_t offset =
          descriptors[static_cast<std::size_t>(u)].first_row - run.first_row;
      some_base = some_base || base >= 0;
      every_base =
          every_base && base >= 0 && first.row_base >= 0 && base == first.row_base + offset;
    }
    if (!every_base) {
      if (some_base && !one_wave) return std::nullopt;
      run.row_base = -1;
    }
    for (std::int32_t u = t; u < end; ++u) {
      const BceTileDescriptor& d = descriptors[static_cast<std::size_t>(u)];
      const BceTileDescriptor from_runs = bce_tile_from_runs(r, u);
      if (!same_geometry(from_runs, d) ||
          (from_runs.row_base != d.row_base && from_runs.row_base != -1)) {
        return std::nullopt;
      }
    }
    t = end;
  }
  return r;
}

BceLaunchRuns bce_launch_runs(const std::optional<BceTileRuns>& runs) {
  if (!runs) return BceTileRunsOf<1>{};
  if (runs->count <= 1) return first_runs<1>(*runs);
  if (runs->count <= 2) return first_runs<2>(*runs);
  if (runs->count <= 4) return first_runs<4>(*runs);
  return *runs;
}

}  // namespace spmvd
