#include "kernels/formats/cuda_bce/bce_layout.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>

#include "core/error.hpp"
#include "kernels/formats/common/sell_layout.hpp"
#include "partition/row_length_distribution.hpp"
#include "partition/row_reordering.hpp"

namespace spmvd {
namespace {

// Boundaries strictly ascending, positive and below the longest row; `is_row_length` says
// whether some row has that length.
template <typename IsRowLength>
void check_boundaries(std::span<const std::int64_t> boundaries, std::int64_t longest_row,
                      IsRowLength is_row_length) {
  if (longest_row == 0 && !boundaries.empty()) {
    throw_invalid("cuda_bce: " + std::to_string(boundaries.size()) +
                  " boundaries for a matrix without non-zeros (need none)");
  }
  for (std::size_t j = 0; j < boundaries.size(); ++j) {
    const std::int64_t m = boundaries[j];
    // Named only when it is wrong: the tuner checks every candidate's boundaries several times.
    const auto name = [&] {
      return "boundary M_" + std::to_string(j + 1) + " = " + std::to_string(m);
    };
    if (m <= 0 || (j > 0 && m <= boundaries[j - 1])) {
      throw_invalid("cuda_bce: " + name() + " must be positive and above the one before");
    }
    if (m >= longest_row) {
      throw_invalid("cuda_bce: " + name() + " must be below the longest row, " +
                    std::to_string(longest_row) + " (M_k, the last block's width)");
    }
    if (!is_row_length(m)) {
      throw_invalid("cuda_bce: " + name() + " is the length of no row (each block must be non-empty)");
    }
  }
}

// M_1 .. M_k: the boundaries and the longest row (none for a matrix of empty rows).
std::vector<std::int64_t> upper_lengths(std::span<const std::int64_t> boundaries,
                                        std::int64_t longest_row) {
  std::vector<std::int64_t> upper(boundaries.begin(), boundaries.end());
  if (longest_row > 0) upper.push_back(longest_row);
  return upper;
}

void check_block_size(std::uint32_t block_size) {
  if (block_size < 32 || (block_size & (block_size - 1)) != 0) {
    throw_invalid("cuda_bce: block_size " + std::to_string(block_size) +
                  " is not a power of two >= 32");
  }
}

// One power of two per block and one for the empty rows (BceTiles::block_lanes).
void check_block_lanes(std::span<const std::int32_t> block_lanes, std::size_t blocks) {
  if (block_lanes.size() != blocks + 1) {
    throw_invalid("cuda_bce: " + std::to_string(block_lanes.size()) + " lanes per block for " +
                  std::to_string(blocks) + " blocks and the empty rows (need " +
                  std::to_string(blocks + 1) + ")");
  }
  for (std::size_t i = 0; i < block_lanes.size(); ++i) {
    const std::int32_t lanes = block_lanes[i];
    if (lanes < 1 || (lanes & (lanes - 1)) != 0) {
      throw_invalid("cuda_bce: lanes " + std::to_string(lanes) + " of block " +
                    std::to_string(i + 1) + " is not a power of two");
    }
  }
}

}  // namespace

template <typename Value>
std::vector<BceBlockShape> BceLayout<Value>::shapes_with_empty_rows() const {
  std::vector<BceBlockShape> shapes;
  for (std::int64_t i = 0; i < blocks(); ++i)
    shapes.push_back({block_row_offsets[i + 1] - block_row_offsets[i], block_widths[i]});
  shapes.push_back({rows - (blocks() == 0 ? 0 : block_row_offsets.back()), 0});
  return shapes;
}

namespace {

// `block_lanes` (nullopt: L = 1 for every block, the paper's layout) as make_bce_layout's.
template <typename Value>
BceLayout<Value> build_layout(const CsrMatrix<double>& matrix,
                              std::span<const std::int64_t> boundaries,
                              std::optional<std::span<const std::int32_t>> block_lanes) {
  if (matrix.rows >= std::numeric_limits<std::int32_t>::max()) {
    throw_invalid("cuda_bce: " + std::to_string(matrix.rows) + " rows; rowNo holds < 2^31");
  }
  // The DF (one parallel pass over the row offsets) gives M_k and the lengths that occur.
  const RowLengthDistribution df = row_length_distribution(matrix.row_offsets);
  const std::int64_t longest_row = df.sets.empty() ? 0 : df.sets.back().length;
  check_boundaries(boundaries, longest_row, [&](std::int64_t m) {
    return std::binary_search(
        df.sets.begin(), df.sets.end(), RowLengthCount{m, 0},
        [](const RowLengthCount& a, const RowLengthCount& b) { return a.length < b.length; });
  });
  const std::vector<std::int64_t> upper = upper_lengths(boundaries, longest_row);
  if (block_lanes) check_block_lanes(*block_lanes, upper.size());

  // Algorithm 3: rowNo, Ap, Aw.
  BlockedRowOrder order = reorder_rows(matrix.row_offsets, upper);

  BceLayout<Value> bce;
  bce.rows = matrix.rows;
  bce.cols = matrix.cols;
  bce.row_no = std::move(order.row_order);
  bce.block_row_offsets = std::move(order.block_row_offsets);
  bce.block_widths = std::move(order.block_widths);
  const std::int64_t k = bce.blocks();
  if (block_lanes) {
    bce.block_lanes.assign(block_lanes->begin(), block_lanes->begin() + k);
  } else {
    bce.block_lanes.assign(static_cast<std::size_t>(k), 1);
  }
  bce.block_slot_offsets.assign(static_cast<std::size_t>(k) + 1, 0);
  for (std::int64_t i = 0; i < k; ++i) {
    const std::int64_t n = bce.block_row_offsets[i + 1] - bce.block_row_offsets[i];
    bce.block_slot_offsets[i + 1] =
        bce.block_slot_offsets[i] + n * bce_padded_width(bce.block_widths[i], bce.block_lanes[i]);
  }
  const auto slots = static_cast<std::size_t>(bce.block_slot_offsets.back());
  bce.offsets.assign(slots, kPaddingColumn);
  bce.values.assign(slots, Value(0));
  bce.row_lengths.assign(static_cast<std::size_t>(bce.rows), 0);
  // Slot j of the block's row r at blockPos + (j / L) * (N * L) + r * L + (j % L) (L = 1:
  // column-major, Sec. 6.2's "stores the related block by columns").
  // Rows in parallel: each writes only its own slots and its own row length.
  for (std::int64_t i = 0; i < k; ++i) {
    const std::int64_t first = bce.block_row_offsets[i];
    const std::int64_t n = bce.block_row_offsets[i + 1] - first;
    const std::int64_t block_pos = bce.block_slot_offsets[i];
    const std::int64_t lanes = bce.block_lanes[i];
    tbb::parallel_for(
        tbb::blocked_range<std::int64_t>(0, n, 4096),
        [&](const tbb::blocked_range<std::int64_t>& range) {
          for (std::int64_t r = range.begin(); r != range.end(); ++r) {
            const std::int64_t row = bce.row_no[static_cast<std::size_t>(first + r)];
            const RowOffset begin = matrix.row_offsets[static_cast<std::size_t>(row)];
            const std::int64_t length = matrix.row_length(row);
            bce.row_lengths[static_cast<std::size_t>(first + r)] =
                static_cast<std::int32_t>(length);
            // Group by group (j = g * L .. g * L + L - 1 at group_slot + 0 .. L - 1): no
            // division per entry.
            std::int64_t group_slot = block_pos + r * lanes;
            for (std::int64_t g = 0; g < length; g += lanes, group_slot += n * lanes) {
              for (std::int64_t j = g; j < std::min(g + lanes, length); ++j) {
                const auto slot = static_cast<std::size_t>(group_slot + (j - g));
                bce.offsets[slot] = matrix.col_indices[static_cast<std::size_t>(begin + j)];
                bce.values[slot] =
                    static_cast<Value>(matrix.values[static_cast<std::size_t>(begin + j)]);
              }
            }
          }
        });
  }
  bool bytes = true;
  for (std::int64_t i = 0; i < k && bytes; ++i) {
    const auto [shortest, longest] =
        std::minmax_element(bce.row_lengths.begin() + bce.block_row_offsets[i],
                            bce.row_lengths.begin() + bce.block_row_offsets[i + 1]);
    bytes = bce_block_allows_byte_lengths(*shortest, *longest);
  }
  // A row longer than a byte holds is in a block of one length, which the kernel does not read:
  // 0 there.
  if (bytes) {
    bce.row_length_bytes.resize(bce.row_lengths.size());
    std::ranges::transform(bce.row_lengths, bce.row_length_bytes.begin(), [](std::int32_t n) {
      return static_cast<std::uint8_t>(n <= kBceByteLengthLimit ? n : 0);
    });
  }
  return bce;
}

}  // namespace

template <typename Value>
BceLayout<Value> make_bce_layout(const CsrMatrix<double>& matrix,
                                 std::span<const std::int64_t> boundaries,
                                 std::span<const std::int32_t> block_lanes) {
  return build_layout<Value>(matrix, boundaries, block_lanes);
}

template <typename Value>
BceLayout<Value> make_bce_layout(const CsrMatrix<double>& matrix,
                                 std::span<const std::int64_t> boundaries) {
  return build_layout<Value>(matrix, boundaries, std::nullopt);
}

namespace {

// Checks the boundaries against the DF, then calls on_set(block, set) for each non-empty row
// vector set in order with the block it falls in; returns the number of blocks.
template <typename OnSet>
std::size_t walk_block_sets(const MatrixFeatures& features,
                            std::span<const std::int64_t> boundaries, OnSet&& on_set) {
  const std::int64_t longest_row =
      features.distribution.empty() ? 0 : features.distribution.back().length;
  check_boundaries(boundaries, longest_row, [&](std::int64_t m) {
    return std::binary_search(
        features.distribution.begin(), features.distribution.end(), RowLengthCount{m, 0},
        [](const RowLengthCount& a, const RowLengthCount& b) { return a.length < b.length; });
  });
  const std::vector<std::int64_t> upper = upper_lengths(boundaries, longest_row);
  std::size_t block = 0;
  for (const RowLengthCount& set : features.distribution) {
    while (set.length > upper[block]) ++block;  // ends: the last upper is the longest row
    on_set(block, set);
  }
  return upper.size();
}

}  // namespace

std::vector<std::vector<RowLengthCount>> bce_block_distributions(
    const MatrixFeatures& features, std::span<const std::int64_t> boundaries) {
  // At most one block per boundary and one up to the longest row; the walk says how many.
  std::vector<std::vector<RowLengthCount>> blocks(boundaries.size() + 1);
  blocks.resize(walk_block_sets(features, boundaries,
                                [&](std::size_t block, const RowLengthCount& set) {
                                  blocks[block].push_back(set);
                                }));
  return blocks;
}

std::uint64_t bce_length_bytes(std::span<const std::vector<RowLengthCount>> blocks) {
  const bool bytes = std::ranges::all_of(blocks, [](const std::vector<RowLengthCount>& sets) {
    return sets.empty() || bce_block_allows_byte_lengths(sets.front().length, sets.back().length);
  });
  return bytes ? 1 : sizeof(std::int32_t);
}

std::vector<BceBlockShape> bce_block_shapes(const MatrixFeatures& features,
                                            std::span<const std::int64_t> boundaries) {
  // bce_block_distributions' blocks, summed as they are walked instead of copied (the tuner
  // sizes every candidate: device_bytes, the tile count).
  std::vector<BceBlockShape> shapes(boundaries.size() + 1);
  shapes.resize(walk_block_sets(features, boundaries,
                                [&](std::size_t block, const RowLengthCount& set) {
                                  shapes[block].rows += set.rows;
                                  shapes[block].width = set.length;
                                }));
  shapes.push_back({features.empty_rows, 0});
  return shapes;
}

std::int64_t bce_resident_threads(const DeviceInfo& device) noexcept {
  if (!device.is_gpu || device.sm_count <= 0 || device.max_threads_per_sm <= 0) return 0;
  return std::int64_t{device.sm_count} * device.max_threads_per_sm;
}

std::int32_t bce_lanes_per_row(BceVariant variant, BceBlockShape shape, std::uint32_t block_size,
                               std::int64_t resident_threads) noexcept {
  if (variant == BceVariant::paper) return 1;
  const std::int32_t base = shape.width >= 32 ? 4 : shape.width >= 16 ? 2 : 1;
  if (resident_threads > 0 && shape.rows >= resident_threads) return 1;  // a row a thread fills it
  if (shape.rows * base >= resident_threads) return base;  // the block fills the GPU alone
  if (shape.width >= kBceBlockPerRowMinWidth && shape.rows < resident_threads / 32)
    return static_cast<std::int32_t>(block_size);
  if (shape.width >= kBceWarpPerRowMinWidth) return 32;
  return base;
}

std::int32_t bce_row_pieces(BceVariant variant, BceBlockShape shape, std::int32_t lanes,
                            std::uint32_t block_size) noexcept {
  if (variant != BceVariant::hopper || lanes != static_cast<std::int32_t>(block_size)) return 1;
  const std::int64_t piece_slots = std::int64_t{block_size} * kBceSlotsPerLanePerPiece;
  return static_cast<std::int32_t>(std::max<std::int64_t>(
      (shape.width + piece_slots - 1) / piece_slots, 1));
}

std::int64_t bce_tile_count(std::span<const BceBlockShape> shapes, BceVariant variant,
                            std::uint32_t block_size, std::int64_t resident_threads) {
  check_block_size(block_size);
  std::int64_t tiles = 0;
  for (const BceBlockShape& shape : shapes) {
    const std::int32_t lanes = bce_lanes_per_row(variant, shape, block_size, resident_threads);
    const std::int64_t rows_per_tile = block_size / lanes;
    tiles += (shape.rows + rows_per_tile - 1) / rows_per_tile *
             bce_row_pieces(variant, shape, lanes, block_size);
  }
  return tiles;
}

BceTiles make_bce_tiles(std::span<const BceBlockShape> shapes, BceVariant variant,
                        std::uint32_t block_size, std::int64_t resident_threads) {
  check_block_size(block_size);
  BceTiles tiles;
  std::vector<std::int64_t> block_first(shapes.size() + 1, 0);
  for (std::size_t b = 0; b < shapes.size(); ++b) {
    const std::int32_t lanes = bce_lanes_per_row(variant, shapes[b], block_size, resident_threads);
    const std::int32_t pieces = bce_row_pieces(variant, shapes[b], lanes, block_size);
    tiles.block_lanes.push_back(lanes);
    tiles.block_pieces.push_back(pieces);
    tiles.block_partial_first.push_back(pieces > 1 ? tiles.partials : 0);
    tiles.block_counter_first.push_back(pieces > 1 ? tiles.counters : 0);
    if (pieces > 1) {
      tiles.partials += shapes[b].rows * pieces;
      tiles.counters += shapes[b].rows;
    }
    block_first[b + 1] = block_first[b] + shapes[b].rows;
  }
  std::vector<std::size_t> order(shapes.size());
  for (std::size_t b = 0; b < order.size(); ++b) order[b] = b;
  if (variant == BceVariant::hopper) {
    // Longest chain first (the header says why): a lane's slots of one tile, its piece's for a
    // split row. The empty rows' chain is 0, so they stay last.
    const auto chain = [&](std::size_t b) {
      const std::int64_t lanes = tiles.block_lanes[b];
      const std::int64_t slots = (shapes[b].width + lanes - 1) / lanes;
      return (slots + tiles.block_pieces[b] - 1) / tiles.block_pieces[b];
    };
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return chain(a) > chain(b); });
  }
  for (const std::size_t b : order) {
    const std::int64_t rows_per_tile = block_size / tiles.block_lanes[b];
    for (std::int64_t r = 0; r < shapes[b].rows; r += rows_per_tile) {
      for (std::int32_t piece = 0; piece < tiles.block_pieces[b]; ++piece) {
        tiles.tile_block.push_back(static_cast<std::int32_t>(b));
        tiles.tile_first_row.push_back(static_cast<std::int32_t>(block_first[b] + r));
        tiles.tile_piece.push_back(piece);
        tiles.tile_end_row.push_back(static_cast<std::int32_t>(
            std::min(block_first[b] + r + rows_per_tile, block_first[b + 1])));
      }
    }
  }
  return tiles;
}

std::vector<std::int32_t> bce_tile_row_bases(std::span<const std::int32_t> row_no,
                                             const BceTiles& tiles) {
  std::vector<std::int32_t> bases(static_cast<std::size_t>(tiles.size()), -1);
  tbb::parallel_for(std::int64_t{0}, tiles.size(), [&](std::int64_t t) {
    const std::int64_t first = tiles.tile_first_row[t];
    const std::int64_t end = tiles.tile_end_row[t];
    for (std::int64_t p = first + 1; p < end; ++p)
      if (row_no[p] != row_no[first] + (p - first)) return;
    bases[t] = row_no[first];
  });
  return bases;
}

namespace {

// In place: every lane of each run of `width` lanes (a power of two <= 32) holds the run's
// __shfl_xor_sync butterfly total, added in the kernel's order.
template <typename Value>
void xor_butterfly(std::vector<Value>& lanes, std::size_t width) {
  for (std::size_t offset = width / 2; offset > 0; offset /= 2) {
    std::vector<Value> next(lanes);
    for (std::size_t lane = 0; lane < lanes.size(); ++lane)
      next[lane] = lanes[lane] + lanes[lane ^ offset];
    lanes = std::move(next);
  }
}

}  // namespace

namespace {

// The check every user of a layout's tiles makes: the layout was interleaved for their lanes.
template <typename Value>
void check_interleaved_for(const BceLayout<Value>& layout, const BceTiles& tiles) {
  if (std::ssize(tiles.block_lanes) != layout.blocks() + 1 ||
      !std::equal(layout.block_lanes.begin(), layout.block_lanes.end(),
                  tiles.block_lanes.begin())) {
    throw_invalid("cuda_bce: the layout is not interleaved for the tiles' lanes per block");
  }
}

}  // namespace

template <typename Value>
std::vector<BceTileDescriptor> bce_tile_descriptors(const BceLayout<Value>& layout,
                                                    const BceTiles& tiles) {
  check_interleaved_for(layout, tiles);
  const std::int64_t k = layout.blocks();
  const std::int64_t non_empty = k == 0 ? 0 : layout.block_row_offsets.back();
  // Per block (the empty rows as block k): its first position, rows, first slot, and its
  // rows' shortest and longest lengths.
  std::vector<std::int64_t> begin(static_cast<std::size_t>(k) + 1), rows(begin.size());
  std::vector<std::int32_t> shortest(begin.size(), 0), longest(begin.size(), 0);
  for (std::int64_t b = 0; b <= k; ++b) {
    begin[b] = b < k ? layout.block_row_offsets[b] : non_empty;
    rows[b] = (b < k ? layout.block_row_offsets[b + 1] : layout.rows) - begin[b];
    if (rows[b] == 0) continue;
    const auto first = layout.row_lengths.begin() + begin[b];
    const auto [lo, hi] = std::minmax_element(first, first + rows[b]);
    shortest[b] = *lo;
    longest[b] = *hi;
  }
  const std::vector<std::int32_t> row_bases = bce_tile_row_bases(layout.row_no, tiles);
  std::vector<BceTileDescriptor> descriptors(static_cast<std::size_t>(tiles.size()));
  for (std::int64_t t = 0; t < tiles.size(); ++t) {
    const std::int32_t b = tiles.tile_block[t];
    const std::int32_t lanes = tiles.block_lanes[b];
    const std::int32_t pieces = tiles.block_pieces[b];
    const std::int32_t piece = tiles.tile_piece[t];
    const std::int64_t step = std::int64_t{lanes} * rows[b];
    const std::int64_t piece_slots = std::int64_t{lanes} * kBceSlotsPerLanePerPiece;
    BceTileDescriptor& d = descriptors[static_cast<std::size_t>(t)];
    d.first_row = tiles.tile_first_row[t];
    d.end_row = tiles.tile_end_row[t];
    d.slot_base = layout.block_slot_offsets[std::min<std::int64_t>(b, k)] +
                  (d.first_row - begin[b]) * lanes + piece * kBceSlotsPerLanePerPiece * step;
    d.step = step;
    d.row_base = row_bases[static_cast<std::size_t>(t)];
    d.lanes = lanes;
    d.uniform_length = shortest[b] == longest[b] ? shortest[b] : -1;
    d.min_length = shortest[b];
    d.first_slot = static_cast<std::int32_t>(pieces > 1 ? piece * piece_slots : 0);
    d.slot_end = pieces > 1 ? static_cast<std::int32_t>((piece + 1) * piece_slots)
                            : std::numeric_limits<std::int32_t>::max();
    d.block = b;
    d.piece = piece;
    d.pieces = pieces;
  }
  return descriptors;
}

namespace {

// One row's sum as the hopper kernel's `lanes` threads walk it from their tile's descriptor,
// reduced as the kernel reduces it. `lane0` is the row's first thread in the tile.
template <typename Value>
Value hopper_row_sum(const BceLayout<Value>& layout, const BceTileDescriptor& d,
                     std::int64_t position, std::uint32_t lane0, const Value* x,
                     std::vector<Value>& lane_sums) {
  // As the kernel reads it: the tile's one length, or the row's in a byte or in 4.
  const auto at = static_cast<std::size_t>(position);
  const std::int32_t length = d.uniform_length >= 0      ? d.uniform_length
                              : layout.lengths_in_bytes() ? layout.row_length_bytes[at]
                                                          : layout.row_lengths[at];
  if (length < d.min_length) {
    throw_invalid("cuda_bce: row " + std::to_string(position) + " has " + std::to_string(length) +
                  " entries, fewer than its tile's min_length " + std::to_string(d.min_length));
  }
  const std::int32_t lanes = d.lanes;
  lane_sums.assign(static_cast<std::size_t>(lanes), Value(0));
  // The kernel's two walks (the slots below min_length, then the rest of the row) add in one
  // ascending order, so one walk replays them.
  const std::int32_t last = std::min(length, d.slot_end);
  for (std::int32_t lane = 0; lane < lanes; ++lane) {
    std::int64_t slot = d.slot_base + lane0 + lane;
    for (std::int32_t i = d.first_slot + lane; i < last; i += lanes, slot += d.step) {
      const auto idx = static_cast<std::size_t>(slot);
      lane_sums[lane] += layout.values[idx] * x[layout.offsets[idx]];
    }
  }
  // Each warp's (or a narrower row's) __shfl_xor_sync butterfly; a block-wide row then adds
  // its warps' totals in warp 0: lane w < lanes / 32 holds warp w's, the rest 0.
  xor_butterfly(lane_sums, static_cast<std::size_t>(std::min(lanes, 32)));
  if (lanes > 32) {
    std::vector<Value> warp_totals(32, Value(0));
    for (std::int32_t w = 0; w < lanes / 32; ++w) warp_totals[w] = lane_sums[w * 32];
    xor_butterfly(warp_totals, 32);
    return warp_totals[0];
  }
  return lane_sums[0];
}

}  // namespace

template <typename Value>
void bce_reference_multiply(const BceLayout<Value>& layout, const BceTiles& tiles,
                            BceVariant variant, std::uint32_t block_size, const Value* x, Value* y,
                            Value alpha, Value beta) {
  check_interleaved_for(layout, tiles);
  const auto write = [&](std::int64_t row, Value sum) {
    Value& out = y[row];
    out = beta == Value(0) ? alpha * sum : alpha * sum + beta * out;
  };
  if (variant == BceVariant::paper) {
    // Algorithm 4 lines 7-11, one thread per row of each tile.
    const std::int64_t k = layout.blocks();
    const std::int64_t non_empty = k == 0 ? 0 : layout.block_row_offsets.back();
    for (std::int64_t tile = 0; tile < tiles.size(); ++tile) {
      const std::int64_t b = tiles.tile_block[tile];
      const std::int64_t begin = b < k ? layout.block_row_offsets[b] : non_empty;
      const std::int64_t end = b < k ? layout.block_row_offsets[b + 1] : layout.rows;
      const std::int64_t width = b < k ? layout.block_widths[b] : 0;
      const std::int64_t block_pos = layout.block_slot_offsets[std::min(b, k)];
      for (std::uint32_t thread = 0; thread < block_size; ++thread) {
        const std::int64_t position = tiles.tile_first_row[tile] + thread;
        if (position >= end) break;
        Value sum = 0;
        const std::int64_t start = block_pos + (position - begin);
        for (std::int64_t i = 0; i < width; ++i) {
          const auto idx = static_cast<std::size_t>(start + i * (end - begin));
          if (std::abs(layout.values[idx]) > Value(0))
            sum = layout.values[idx] * x[layout.offsets[idx]] + sum;
        }
        write(layout.row_no[static_cast<std::size_t>(position)], sum);
      }
    }
    return;
  }
  const std::vector<BceTileDescriptor> descriptors = bce_tile_descriptors(layout, tiles);
  std::vector<Value> lane_sums;
  // A split row's piece sums, in piece order (the kernel's last piece adds them so).
  std::vector<Value> partials(static_cast<std::size_t>(tiles.partials), Value(0));
  std::vector<std::int32_t> arrived(static_cast<std::size_t>(tiles.counters), 0);
  for (const BceTileDescriptor& d : descriptors) {
    for (std::uint32_t thread = 0; thread < block_size; thread += d.lanes) {
      const std::int64_t position = d.first_row + thread / d.lanes;
      if (position >= d.end_row) break;
      Value sum = hopper_row_sum(layout, d, position, thread, x, lane_sums);
      if (d.pieces > 1) {
        const std::int64_t row_in_block = position - layout.block_row_offsets[d.block];
        const auto first = static_cast<std::size_t>(tiles.block_partial_first[d.block] +
                                                    row_in_block * d.pieces);
        partials[first + static_cast<std::size_t>(d.piece)] = sum;
        const auto counter =
            static_cast<std::size_t>(tiles.block_counter_first[d.block] + row_in_block);
        if (++arrived[counter] < d.pieces) continue;  // not the last piece: no y write
        sum = Value(0);
        for (std::int32_t q = 0; q < d.pieces; ++q)
          sum += partials[first + static_cast<std::size_t>(q)];
      }
      write(d.row_base >= 0 ? d.row_base + (position - d.first_row)
                            : layout.row_no[static_cast<std::size_t>(position)],
            sum);
    }
  }
}

template struct BceLayout<float>;
template struct BceLayout<double>;
template BceLayout<float> make_bce_layout(const CsrMatrix<double>&, std::span<const std::int64_t>);
template BceLayout<double> make_bce_layout(const CsrMatrix<double>&,
                                           std::span<const std::int64_t>);
template BceLayout<float> make_bce_layout(const CsrMatrix<double>&, std::span<const std::int64_t>,
                                          std::span<const std::int32_t>);
template BceLayout<double> make_bce_layout(const CsrMatrix<double>&, std::span<const std::int64_t>,
                                           std::span<const std::int32_t>);
template std::vector<BceTileDescriptor> bce_tile_descriptors(const BceLayout<float>&,
                                                             const BceTiles&);
template std::vector<BceTileDescriptor> bce_tile_descriptors(const BceLayout<double>&,
                                                             const BceTiles&);
template void bce_reference_multiply(const BceLayout<float>&, const BceTiles&, BceVariant,
                                     std::uint32_t, const float*, float*, float, float);
template void bce_reference_multiply(const BceLayout<double>&, const BceTiles&, BceVariant,
                                     std::uint32_t, const double*, double*, double, double);

}  // namespace spmvd
