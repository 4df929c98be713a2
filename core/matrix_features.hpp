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

// The rows of groups of `group_rows` consecutive rows, each row counted at the length of the
// longest row of its group (rows 0..g-1, g..2g-1, ...; the last group may be shorter): an
// unsorted SELL slice of height g is stored that wide. Ascending in length; length 0 where a
// whole group is empty.
struct GroupPaddedDistribution {
  std::int64_t group_rows = 0;
  std::vector<RowLengthCount> distribution;
  friend bool operator==(const GroupPaddedDistribution&, const GroupPaddedDistribution&) = default;
};

// Non-zero b x b blocks of the block grid aligned at (0, 0): what a BSR of block_dim b stores.
struct BlockCount {
  std::int64_t block_dim = 0;
  std::int64_t blocks = 0;
  friend bool operator==(const BlockCount&, const BlockCount&) = default;
};

// x sectors per non-zero (MatrixFeatures::x_sectors_per_nonzero) of the rows in the order a
// stable sort by descending length within windows of sort_window consecutive rows leaves them:
// the order of cuda_sell's sorted slices. Sorting pulls rows of one length together from
// across the window, so a mesh whose lengths vary gathers x at random once sorted.
struct SortedGathers {
  std::int64_t sort_window = 0;  // rows; the whole matrix where it equals the rows
  double x_sectors_per_nonzero = 0.0;
  friend bool operator==(const SortedGathers&, const SortedGathers&) = default;
};

// Group sizes, block dimensions and sort windows that feature extraction measures.
// (The SELL slice heights of cuda_sell and cusparse_sell; cuda_sell's sort windows beside the
// whole matrix.)
inline constexpr std::int64_t kFeatureGroupRows[] = {32, 64};
inline constexpr std::int64_t kFeatureBlockDims[] = {2, 4};
inline constexpr std::int64_t kFeatureSortWindows[] = {256, 4096};

// x gathers are counted per group of kXGatherGroupRows consecutive rows (the rows of one warp
// in SELL, ELL and CSR scalar; neighbouring warps in CSR vector) in sectors of
// kXSectorColumns columns (a 32-byte sector of fp32 x).
inline constexpr std::int64_t kXGatherGroupRows = 32;
inline constexpr std::int64_t kXSectorColumns = 8;

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
  // Distinct x sectors (column / kXSectorColumns) that each group of kXGatherGroupRows rows
  // touches, summed over groups, per non-zero: ~1 for random columns, ~(L + 38) / (256 L)
  // for a band of L columns a row. Unlike the span it sees a block-diagonal matrix of random
  // blocks as random, and a stencil's few separate column runs as what they cost. -1 where
  // not measured (features from before model version 8).
  double x_sectors_per_nonzero = -1.0;
  // One per kFeatureGroupRows; empty where not measured (features from before model version 6).
  std::vector<GroupPaddedDistribution> group_padded;
  // One per kFeatureBlockDims; empty where not measured.
  std::vector<BlockCount> block_counts;
  // One per distinct min(w, rows) of kFeatureSortWindows and rows itself, ascending; empty
  // where not measured (features from before model version 11).
  std::vector<SortedGathers> sorted_gathers;

  // The padded distribution of groups of `group_rows`, nullptr where not measured.
  const GroupPaddedDistribution* padded_for(std::int64_t group_rows) const noexcept {
    for (const GroupPaddedDistribution& g : group_padded)
      if (g.group_rows == group_rows) return &g;
    return nullptr;
  }
  // The non-zero blocks of block_dim, or -1 where not measured.
  std::int64_t blocks_for(std::int64_t block_dim) const noexcept {
    for (const BlockCount& b : block_counts)
      if (b.block_dim == block_dim) return b.blocks;
    return -1;
  }

  // x_sectors_per_nonzero after sorting within windows of sort_window rows: that of the
  // measured window min(sort_window, rows); the unsorted value for sort_window <= 1; -1 where
  // that window was not measured.
  double sorted_x_sectors_per_nonzero(std::int64_t sort_window) const noexcept {
    if (sort_window <= 1) return x_sectors_per_nonzero;
    const std::int64_t window = sort_window < rows ? sort_window : rows;
    for (const SortedGathers& g : sorted_gathers)
      if (g.sort_window == window) return g.x_sectors_per_nonzero;
    return -1.0;
  }

  friend bool operator==(const MatrixFeatures&, const MatrixFeatures&) = default;
};

}  // namespace spmvd
