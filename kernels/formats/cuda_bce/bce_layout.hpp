#pragma once
// Host side of BCE, the blocked CSR/ELL format of paper 000 (Sec. 6.2, Fig. 5): the rows are
// split by length into blocks C_1..C_k at the boundaries M_1 < ... < M_{k-1} (block i holds
// the rows of length in (M_{i-1}, M_i], M_k = the longest row), reordered block by block
// (Algorithm 3, partition/row_reordering.hpp), and each block stored as an ELL array of width
// W(C_i) interleaved for the L lanes that share each of its rows (bce_lanes_per_row):
//   Ap (k + 1)        the first BCE position of each block, Ap[k] = the non-empty rows;
//   Aw (k)            W(C_i);
//   blockPos (k + 1)  the first slot of each block in EData / Offset, blockPos[k] = all slots;
//                     block i takes N(C_i) x W'(C_i) slots, W' = W rounded up to a multiple of L;
//   EData, Offset     slot j of the block's row r (0-based within the block) at
//                       blockPos[i] + (j / L) * (N(C_i) * L) + r * L + (j % L),
//                     i.e. groups of L consecutive slots of a row, the rows' groups side by
//                     side, then the next group of every row; padding value 0, column
//                     kPaddingColumn;
//   rowNo (N)         BCE position -> the caller's row; the empty rows follow the blocks (the
//                     hopper kernel skips it in tiles of consecutive caller rows:
//                     bce_tile_row_bases).
// Why interleaved: the hopper kernel's L lanes of a row read its slots l, l + L, ... together,
// and a warp holds 32 / L consecutive rows (or one row's 32 lanes, for L >= 32), so at every
// step the warp's 32 lanes read 32 consecutive slots: whole sectors for every L. Column-major
// (slot j of row r at blockPos + j * N + r) puts one row's lanes N slots apart: with L = 32 or a
// block-wide row every lane touches its own 32-byte sector and uses 4-8 bytes of it, and for a
// block larger than L2 the neighbouring rows that would use the rest of the sector come too late
// (the sector is evicted), so DRAM moves several times the bytes the row needs.
// L = 1 is exactly column-major, the layout of Algorithm 4: the paper variant (L = 1 for every
// block) and the hopper variant's narrow blocks are stored as the paper stores them.
// The layout therefore depends on the tiling: shapes (bce_block_shapes) -> tiles
// (make_bce_tiles, its block_lanes) -> layout (make_bce_layout).
// The kernels run over tiles: a tile is the rows one CUDA block covers inside one BCE block
// (paper 000 Sec. 5.6: "the blocks ... should be divided into some sub-blocks"), and the empty
// rows form one more block of width 0, so that y is written for them too.
// Everything here is pure C++ so that the layout and the kernels' arithmetic are unit-tested on
// the host (bce_reference_multiply replays each kernel thread by thread).

#include <cstdint>
#include <span>
#include <vector>

#include "core/csr_matrix.hpp"
#include "core/device_info.hpp"
#include "core/matrix_features.hpp"

namespace spmvd {

// cuda_bce's kernel variants (CudaBceParams::variant).
enum class BceVariant : std::int64_t {
  // Algorithm 4 as printed: one thread per row, every slot up to the block width, the
  // per-element |EData| > 0 test.
  paper = 0,
  // Hopper: each row stops at its own length (no per-slot branch, no padding read), and rows of
  // wide blocks are shared by bce_lanes_per_row lanes (up to a whole CUDA block).
  hopper = 1,
};

// One block of a BCE partition: N(C_i) rows of width W(C_i).
struct BceBlockShape {
  std::int64_t rows = 0;
  std::int64_t width = 0;
  friend bool operator==(const BceBlockShape&, const BceBlockShape&) = default;
};

template <typename Value>
struct BceLayout {
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::vector<std::int32_t> row_no;              // rowNo
  std::vector<std::int64_t> block_row_offsets;   // Ap
  std::vector<std::int64_t> block_widths;        // Aw
  std::vector<std::int64_t> block_slot_offsets;  // blockPos (over the padded widths W')
  std::vector<std::int32_t> block_lanes;         // L of each block (k): the interleave
  std::vector<ColIndex> offsets;                 // Offset
  std::vector<Value> values;                     // EData
  std::vector<std::int32_t> row_lengths;         // NNZ of the row at each BCE position
  // row_lengths in a byte each where every block allows it (bce_block_allows_byte_lengths;
  // 0 for a row too long for a byte, in a block of one length, not read), else empty: the
  // hopper kernel then reads row_lengths.
  std::vector<std::uint8_t> row_length_bytes;

  std::int64_t blocks() const noexcept { return static_cast<std::int64_t>(block_widths.size()); }
  bool lengths_in_bytes() const noexcept { return !row_length_bytes.empty(); }
  // The blocks, then the empty rows as one block of width 0 (the kernels' view).
  std::vector<BceBlockShape> shapes_with_empty_rows() const;
};

// The hopper kernel reads a row's length (where its block's rows have more than one) in one
// byte where every such block's rows are at most kBceByteLengthLimit long, else in 4. Why a
// byte: beyond L2 the length is bytes streamed beside the row's own, 4 of a 5-point stencil
// row's 44 (fp32); a row of 256 slots or more streams at least 2 KB, and 3 bytes more for each
// row of its block are little beside that. One width per layout, the kernel compiled for it: a
// width per block, a select between two loads, took fp64 launches in L2 3-4 % longer (wiki-Vote
// 8 %; H100, 2026-12-07, bench/suite_bce_ab.txt's inputs in L2).
inline constexpr std::int64_t kBceByteLengthLimit = 255;

// Whether a block whose rows run from `shortest` to `longest` allows its layout's lengths in a
// byte: one length (none read) or none longer than kBceByteLengthLimit.
constexpr bool bce_block_allows_byte_lengths(std::int64_t shortest,
                                             std::int64_t longest) noexcept {
  return shortest == longest || longest <= kBceByteLengthLimit;
}

// W(C_i) rounded up to a multiple of the block's lanes L (its slots per row in the layout).
constexpr std::int64_t bce_padded_width(std::int64_t width, std::int32_t lanes) noexcept {
  return (width + lanes - 1) / lanes * lanes;
}

// The layout for boundaries M_1 < ... < M_{k-1} (CudaBceParams::boundaries; M_k is the longest
// row), each block interleaved for its lanes: `block_lanes` as make_bce_tiles gives them for
// the shapes bce_block_shapes gives these boundaries (k + 1 entries, the empty rows' last; it
// has no slots). Throws Error(invalid_argument) when a boundary is not positive, not above the
// one before, not below the longest row, or not the length of any row (OPA's boundaries are set
// lengths, paper 000 Sec. 5.5: every block is then non-empty and W(C_i) = M_i), when
// block_lanes has not k + 1 entries or one is not a power of two, or when the matrix has 2^31
// rows or more. O(N log k + E) (E = the slots).
template <typename Value>
BceLayout<Value> make_bce_layout(const CsrMatrix<double>& matrix,
                                 std::span<const std::int64_t> boundaries,
                                 std::span<const std::int32_t> block_lanes);
// The paper's layout (Sec. 6.2, Algorithm 4): every block column-major (L = 1).
template <typename Value>
BceLayout<Value> make_bce_layout(const CsrMatrix<double>& matrix,
                                 std::span<const std::int64_t> boundaries);

// The block shapes (empty rows last, as a block of width 0) that `boundaries` give a matrix of
// this DF, with the same checks as make_bce_layout, against the DF instead of the rows.
std::vector<BceBlockShape> bce_block_shapes(const MatrixFeatures& features,
                                            std::span<const std::int64_t> boundaries);

// The DF slice of block i (0-based) of `boundaries`: the sets with length in (M_{i}, M_{i+1}]
// (M_0 = 0, the last block up to the longest row). Same checks as bce_block_shapes.
std::vector<std::vector<RowLengthCount>> bce_block_distributions(
    const MatrixFeatures& features, std::span<const std::int64_t> boundaries);

// The bytes the hopper kernel reads for each row's length in a layout of these blocks
// (bce_block_distributions): 1 where every block allows it (bce_block_allows_byte_lengths),
// else 4.
std::uint64_t bce_length_bytes(std::span<const std::vector<RowLengthCount>> blocks);

// The threads one GPU keeps resident (sm_count x max_threads_per_sm: 270336 on an H100, 132 x
// 2048); CudaBceParams::resident_threads, so that the tiling of a stored plan is the one chosen
// for its device. 0 where the device does not say (the tiling then never widens past 4 lanes).
std::int64_t bce_resident_threads(const DeviceInfo& device) noexcept;

// The hopper variant's thresholds (bce_lanes_per_row).
// A warp per row from this width: 8 slots per lane, as the 4 lanes of a 32-wide row, so the
// 5-step shuffle reduction stays a small share of the row's work.
inline constexpr std::int64_t kBceWarpPerRowMinWidth = 256;
// A whole CUDA block per row from this width: at block size 256 each thread keeps >= 4 slots
// (the cross-warp reduction costs one __syncthreads and a shared-memory round trip, about what
// 4 dependent gathers cost) and the row's chain is W / block_size gathers.
inline constexpr std::int64_t kBceBlockPerRowMinWidth = 1024;

// A block-wide row longer than block_size x this many slots is cut into pieces, each its own
// CUDA block (hopper; bce_row_pieces). Why: a CUDA block walks its row's W / block_size slots a
// lane as one dependent chain (an index load, then its gather, ~1-1.5 us from DRAM, four in
// flight with the kernel's unrolling), so circuit-3M's 50 rows of 50000 kept 50 SMs busy for
// ~390 gathers a lane at block size 128 (0.42 ms against 0.19 at 512, H100 2026-11-24) while
// the other SMs had finished. Each piece pays a fixed cost (its tile's tables, the row's
// length, the block reduction, the partial store and count: several dependent latencies), so
// pieces must stay long: at 16 slots a lane (four rounds of the unrolled loop) block size 128
// came to 0.18 ms on circuit-3M but block size 512 lost 8 % on fewlong-4M (rows of 20000) and
// 17 % on rmat-s20-ef16; 64 slots a lane (16 rounds) cuts only chains above that.
inline constexpr std::int64_t kBceSlotsPerLanePerPiece = 64;

// Lanes that share one row of a block of this shape. paper: 1 (Algorithm 4). hopper:
//  - one lane a row where the block has at least resident_threads rows: a row a thread then
//    occupies every thread the GPU keeps resident, enough bytes are in flight on every SM
//    (Little's law: ~3.35 TB/s x ~0.6 us is ~2 MB, ~16 KB per SM, which 2048 resident threads
//    with 4 gathers in flight each exceed several times), and more lanes only add shuffle
//    steps and leave the lanes of the block's shorter rows idle: against the base below,
//    banded-17M (width 17) ran 5 % faster, fem-b3-30M 3-7 %, stencil3d-27pt-26M 3-4 % (H100,
//    2026-12-07, docs/BENCHMARKS.md "What each step bought").
//  - else the base: 4 from width 32, 2 from width 16, else 1 (each lane keeps >= 8 slots of the
//    block's widest row), kept wherever rows x base >= resident_threads (the block's lanes fill
//    the GPU alone).
//  - fewer rows than that (the tail of a skewed DF: circuit-3M's 50 rows of 50000) leave SMs
//    idle, and the time is the row's dependent chain, W / lanes gathers: then a whole CUDA
//    block (block_size lanes, block-wide reduction) per row from kBceBlockPerRowMinWidth when
//    rows < resident_threads / 32 (fewer rows than the GPU has warps: a warp per row could not
//    fill it either; with as many rows, a warp per row already fills every warp slot and the
//    block reduction would be pure overhead), else a warp (32 lanes) per row from
//    kBceWarpPerRowMinWidth; the chain is then at most W / 32, and W / block_size for the
//    widest blocks. The layout interleaves such a block for its lanes (make_bce_layout), so
//    the 32 lanes of a row read 32 consecutive slots at every step.
// block_size: the launch's (a power of two >= 32). (GPU to confirm: spmv-bench, paper against
// hopper, on circuit-3M.)
std::int32_t bce_lanes_per_row(BceVariant variant, BceBlockShape shape, std::uint32_t block_size,
                               std::int64_t resident_threads) noexcept;

// The pieces each row of a block of this shape is cut into (each piece its own tile, the
// pieces' sums added by the last to finish): ceil(W / (block_size x kBceSlotsPerLanePerPiece))
// for the hopper variant's block-wide rows (lanes == block_size), else 1.
std::int32_t bce_row_pieces(BceVariant variant, BceBlockShape shape, std::int32_t lanes,
                            std::uint32_t block_size) noexcept;

// The kernels' launch: one CUDA block of block_size threads per tile.
struct BceTiles {
  std::vector<std::int32_t> block_lanes;     // per block of the shapes, empty rows last
  std::vector<std::int32_t> block_pieces;    // per block: bce_row_pieces
  // Per block, where its rows' piece sums (row r's piece q at first + r * pieces + q) and
  // arrival counts (row r's at first + r) start; both 0 for unsplit blocks.
  std::vector<std::int64_t> block_partial_first;
  std::vector<std::int64_t> block_counter_first;
  std::int64_t partials = 0;  // piece sums of all split rows
  std::int64_t counters = 0;  // split rows
  std::vector<std::int32_t> tile_block;      // tile -> block
  std::vector<std::int32_t> tile_first_row;  // tile -> its first BCE position
  std::vector<std::int32_t> tile_piece;      // tile -> its piece of the row (0 if unsplit)
  std::vector<std::int32_t> tile_end_row;    // tile -> one past its last (host side only)
  std::int64_t size() const noexcept { return static_cast<std::int64_t>(tile_block.size()); }
};
// `shapes` as shapes_with_empty_rows gives them; block_size a power of two >= 32; lanes per
// block from bce_lanes_per_row (resident_threads as there).
// Tile order: paper, block by block as Algorithm 4. hopper, the blocks by their tiles' chain
// (ceil(W / lanes) gathers a lane, over the pieces of a split row; a stable sort, longest first;
// the empty rows last): the GPU
// starts CUDA blocks roughly in index order, so a block-wide row placed last (circuit-3M's 50
// rows of 50000, ~100 dependent gathers a lane) would start when every SM is finishing the
// short rows and run alone after them; first, it runs beside them (longest processing time
// first, the classic list-scheduling rule).
BceTiles make_bce_tiles(std::span<const BceBlockShape> shapes, BceVariant variant,
                        std::uint32_t block_size, std::int64_t resident_threads);
// make_bce_tiles(...).size() without building the tables (the candidates' grid_size).
std::int64_t bce_tile_count(std::span<const BceBlockShape> shapes, BceVariant variant,
                            std::uint32_t block_size, std::int64_t resident_threads);

// Per tile: the caller's row of its first position where the tile's positions are consecutive
// rows of the caller (rowNo[p] = rowNo[first] + (p - first) over the whole tile: k = 1 without
// empty rows, a run of equally classed rows, every one-row tile), else -1. The hopper kernel
// then writes y[base + (p - first)] without reading rowNo: 4 bytes a row fewer. `row_no` the
// layout's, `tiles` the tiles it was laid out for. O(N).
std::vector<std::int32_t> bce_tile_row_bases(std::span<const std::int32_t> row_no,
                                             const BceTiles& tiles);

// Everything the hopper kernel needs of one tile, gathered on the host so that a CUDA block
// reads it in one step (four 16-byte loads issued together) before its first slot. Read through
// the tables instead (tile -> block -> Ap, blockPos, lanes, ...; then the row's length; then
// its slots) the kernel put three dependent loads before its first gather, and on the suite's
// matrices that fit in L2 it took 0.7-1.6 us longer than our ELL's one launch (of 4-12 us;
// H100, 2026-12-06, model version 36's suite run).
struct alignas(16) BceTileDescriptor {
  // Slot of lane 0 of the tile's first row at first_slot: thread t of the tile starts at
  // slot_base + t (blockPos + (first_row - Ap) * L + q * kBceSlotsPerLanePerPiece * step for
  // piece q), one step (N * L) per L slots of its row.
  std::int64_t slot_base = 0;
  std::int64_t step = 0;
  std::int32_t first_row = 0;  // the tile's first BCE position
  std::int32_t end_row = 0;    // one past its last
  std::int32_t row_base = -1;  // bce_tile_row_bases: the caller's row of first_row, or -1
  std::int32_t lanes = 1;      // L of the tile's block
  // The length of every row of the block where all have one (the kernel reads no length),
  // else -1.
  std::int32_t uniform_length = -1;
  // The shortest row of the block: the slots below it exist in every row, so the kernel walks
  // them while its row's own length is still loading.
  std::int32_t min_length = 0;
  // The slots of the row this tile walks: [first_slot, slot_end) of its piece
  // (q * L * kBceSlotsPerLanePerPiece onwards), [0, INT32_MAX) for an unsplit row.
  std::int32_t first_slot = 0;
  std::int32_t slot_end = 0;
  std::int32_t block = 0;   // the tile's block (a split row's piece sums and count)
  std::int32_t piece = 0;   // q
  std::int32_t pieces = 1;  // the block's bce_row_pieces
  std::int32_t unused = 0;  // to 64 bytes
  friend bool operator==(const BceTileDescriptor&, const BceTileDescriptor&) = default;
};
static_assert(sizeof(BceTileDescriptor) == 64, "four 16-byte loads");

// One descriptor per tile of `tiles` over `layout` (interleaved for the tiles' lanes), the
// blocks' uniform and shortest lengths from the layout's row lengths. Throws
// Error(invalid_argument) when the layout was not interleaved for the tiles' lanes. O(N).
template <typename Value>
std::vector<BceTileDescriptor> bce_tile_descriptors(const BceLayout<Value>& layout,
                                                    const BceTiles& tiles);

// y = alpha A x + beta y (beta == 0: y write-only) over the built arrays, each kernel thread
// replayed with the kernel's own slot arithmetic (paper: lane l of position p starts at
// blockPos + (p - Ap) + l and steps by N; hopper: from its tile's descriptor,
// bce_tile_descriptors) and in the order the GPU kernel adds (lanes reduced by xor shuffles
// within each warp; a block-wide row's warp sums then by one more warp's xor shuffles; a split
// row's piece sums from 0 in piece order): the unit tests' check of the layout, the
// descriptors and the kernels' index arithmetic. x and y in the caller's order; hopper rows
// written through the descriptor's row base where the tile has one, through rowNo elsewhere
// (paper: rowNo always, as Algorithm 4). Throws Error(invalid_argument) when the layout was not
// interleaved for the tiles' lanes, or (hopper) a row is shorter than its descriptor's
// min_length.
template <typename Value>
void bce_reference_multiply(const BceLayout<Value>& layout, const BceTiles& tiles,
                            BceVariant variant, std::uint32_t block_size, const Value* x, Value* y,
                            Value alpha, Value beta);

}  // namespace spmvd
