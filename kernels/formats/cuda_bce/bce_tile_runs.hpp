#pragma once
// The hopper kernel's tiles as a few runs passed in the launch's parameters, so that a CUDA
// block computes its tile's descriptor instead of loading it. The descriptor load
// (BceTileDescriptor) is a memory latency before a block's first slot; a launch that fills the
// GPU once (a matrix in L2: one wave of blocks, each a chain of latencies) waits for it once
// more than our ELL, whose geometry is arithmetic. The tiles of one BCE block are consecutive
// and evenly spaced (make_bce_tiles: rows_per_tile = block_size / lanes), so a run needs its
// first tile, row and slot, its last row, and the block's lanes, step and lengths; a tile's
// descriptor is then bce_tile_from_runs (the kernel's own arithmetic, unit-tested on the host
// against bce_tile_descriptors).

#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <variant>
#include <span>

#include "kernels/formats/cuda_bce/bce_layout.hpp"

#if defined(__CUDACC__)
#define SPMVD_BCE_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define SPMVD_BCE_HOST_DEVICE inline
#endif

namespace spmvd {

// At most this many runs: the kernel picks its tile's run by comparing its block index with
// each run's first tile, unrolled (the parameters are read at fixed offsets, never indexed); a
// partition of a few blocks, plus the empty rows' block, fits.
inline constexpr int kBceMaxTileRuns = 8;

struct BceTileRun {
  std::int64_t slot_base = 0;  // the run's first tile's (its first row's lane 0)
  std::int64_t step = 0;       // the block's N x L
  std::int32_t first_tile = 0;
  std::int32_t first_row = 0;  // the first tile's first BCE position
  std::int32_t end_row = 0;    // one past the run's last position
  std::int32_t rows_per_tile = 0;
  std::int32_t lanes = 1;
  std::int32_t uniform_length = -1;
  std::int32_t min_length = 0;
  // The caller's row of first_row where every position of the run is the next caller row
  // (k = 1 without empty rows, a block of one run), else -1: the kernel then reads rowNo.
  std::int32_t row_base = -1;
  std::int32_t block = 0;
  friend bool operator==(const BceTileRun&, const BceTileRun&) = default;
};

// Up to N runs: a launch passes the smallest N that holds its runs (bce_launch_runs).
template <std::size_t N>
struct BceTileRunsOf {
  std::array<BceTileRun, N> runs{};
  std::int32_t count = 0;
};
using BceTileRuns = BceTileRunsOf<kBceMaxTileRuns>;

// Tile `tile`'s descriptor from the runs (its run: the last whose first tile is <= tile).
template <std::size_t N>
SPMVD_BCE_HOST_DEVICE BceTileDescriptor bce_tile_from_runs(const BceTileRunsOf<N>& r,
                                                           std::int32_t tile) {
  BceTileRun run = r.runs[0];
#if defined(__CUDACC__)
#pragma unroll
#endif
  for (int i = 1; i < static_cast<int>(N); ++i)
    if (i < r.count && tile >= r.runs[i].first_tile) run = r.runs[i];
  const std::int32_t offset = (tile - run.first_tile) * run.rows_per_tile;
  BceTileDescriptor t;
  t.first_row = run.first_row + offset;
  t.end_row =
      run.end_row - t.first_row < run.rows_per_tile ? run.end_row : t.first_row + run.rows_per_tile;
  t.slot_base = run.slot_base + std::int64_t{offset} * run.lanes;
  t.step = run.step;
  t.row_base = run.row_base >= 0 ? run.row_base + offset : -1;
  t.lanes = run.lanes;
  t.uniform_length = run.uniform_length;
  t.min_length = run.min_length;
  t.first_slot = 0;
  t.slot_end = std::numeric_limits<std::int32_t>::max();
  t.block = run.block;
  t.piece = 0;
  t.pieces = 1;
  return t;
}

// The runs of `descriptors` (bce_tile_descriptors, tiles of block_size threads), or nothing
// where they do not serve: a row cut into pieces (its tiles' slots and sums are per piece),
// more than kBceMaxTileRuns runs, or, where the tiles do not fit on the GPU at once (tiles x
// block_size > resident_threads), a tile whose rows are consecutive caller rows in a run whose
// rows are not all (the descriptor's row base spares it rowNo, 4 bytes a row: a matrix beyond
// L2 pays bytes, not a latency a block, which its resident blocks hide). Every tile's
// bce_tile_from_runs is checked against its descriptor (the row base may be -1 where the
// descriptor's is not: rowNo holds the same row). O(tiles).
std::optional<BceTileRuns> bce_tile_runs(std::span<const BceTileDescriptor> descriptors,
                                         std::uint32_t block_size, std::int64_t resident_threads);

// The runs a launch passes, in the smallest BceTileRunsOf that holds them: a launch's parameters
// are copied to the GPU with it, so bytes no tile reads lengthen it. One run's 64 bytes instead
// of eight runs' 456 took the hopper kernel's launches in L2 2.8 % shorter (geometric mean over
// bench/suite_bce_ab.txt's 28 in-L2 pairs, two runs a side taken a b b a, stencil2d-5pt-1M fp32
// 0.89, the rest 0.95-1.02; H100, 2026-12-07, docs/BENCHMARKS.md). Without runs (the tiles load
// their descriptors): BceTileRunsOf<1>{}, unread.
using BceLaunchRuns = std::variant<BceTileRunsOf<1>, BceTileRunsOf<2>, BceTileRunsOf<4>,
                                   BceTileRunsOf<kBceMaxTileRuns>>;
BceLaunchRuns bce_launch_runs(const std::optional<BceTileRuns>& runs);

}  // namespace spmvd
