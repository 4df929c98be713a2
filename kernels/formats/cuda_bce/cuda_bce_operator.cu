#include <cstddef>
#include <cstring>
#include <type_traits>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "kernels/cuda/cuda_check.cuh"
#include "kernels/device_lock.hpp"
#include "kernels/formats/common/builder_checks.hpp"
#include "kernels/formats/common/spmv_device.cuh"
#include "kernels/formats/cuda_bce/bce_layout.hpp"
#include "kernels/formats/cuda_bce/bce_tile_runs.hpp"
#include "kernels/formats/cuda_bce/cuda_bce_rules.hpp"
#include "partition/row_length_distribution.hpp"

namespace spmvd {
namespace {

// The paper kernel's tables, the empty rows as block k (width 0).
struct BcePaperArrays {
  const std::int32_t* tile_block;
  const std::int32_t* tile_first_row;
  const std::int64_t* block_rows;    // k + 2: Ap, then N
  const std::int64_t* block_widths;  // k + 1: Aw, then 0
  const std::int64_t* block_pos;     // k + 1: blockPos (blockPos[k]: the empty block's, unused)
  const std::int32_t* row_no;        // N
  const std::int32_t* offsets;
};

// The hopper kernel's: a descriptor per tile (bce_tile_descriptors), the rows' lengths (of the
// kernel's Length: bce_length_bytes) and rowNo, and for split rows (BceTiles) where each
// block's rows start, their piece sums and arrival counts start, and the counts themselves
// (zero between launches).
struct BceHopperArrays {
  const BceTileDescriptor* tiles;
  const void* row_lengths;          // N
  const std::int32_t* row_no;       // N
  const std::int32_t* offsets;
  const std::int64_t* block_rows;   // k + 2: Ap, then N
  const std::int64_t* block_partial_first;
  const std::int64_t* block_counter_first;
  std::int32_t* counters;
};

// Algorithm 4 of paper 000 as printed: one CUDA block per tile (a sub-block of at most
// blockDim.x rows of one BCE block), one thread per row, every slot up to the block width with
// the |EData| > 0 test (line 9), y written through rowNo. Line 6's y[r_i] <- 0 becomes the
// alpha/beta epilogue.
template <typename Value>
__global__ void bce_paper_kernel(BcePaperArrays a, const Value* __restrict__ values,
                                 const Value* __restrict__ x, Value* __restrict__ y, Value alpha,
                                 Value beta) {
  const std::int32_t b = __ldg(a.tile_block + blockIdx.x);
  const std::int64_t begin = __ldg(a.block_rows + b);
  const std::int64_t end = __ldg(a.block_rows + b + 1);
  const std::int64_t position = __ldg(a.tile_first_row + blockIdx.x) + threadIdx.x;
  if (position >= end) return;
  const std::int64_t rownum = end - begin;
  const std::int64_t width = __ldg(a.block_widths + b);
  const std::int64_t start = __ldg(a.block_pos + b) + (position - begin);
  Value sum = 0;
  for (std::int64_t i = 0; i < width; ++i) {
    const std::int64_t idx = start + i * rownum;
    const Value v = __ldg(values + idx);
    if (fabs(v) > Value(0)) sum = v * __ldg(x + __ldg(a.offsets + idx)) + sum;
  }
  catalogue_detail::store_axpby(y + __ldg(a.row_no + position), alpha, sum, beta);
}

// Full occupancy for the largest block: 2048 resident threads an SM (Hopper) in blocks of 512
// leave 32 registers a thread. The interleaved slot arithmetic and the tile row bases took the
// fp64 kernel to 36 without the bound (3 blocks of 512 an SM: stencils 6-8 % slower, H100
// 2026-11-24); with it, 32 and no spills (ptxas -v).
constexpr int kBceMaxBlockSize = static_cast<int>(kBceBlockSizes.back());
constexpr int kBceFullOccupancyBlocks = 2048 / kBceMaxBlockSize;

// The largest block size (kBceBlockSizes) over 32: the warps of a block-wide row.
constexpr int kBceMaxWarpsPerBlock = static_cast<int>(kBceBlockSizes.back() / 32);

// A tile's descriptor in one step: its first three 16-byte words, in flight together. The
// fourth (block, piece, pieces) matters only to a split row after its walk and is read there,
// so that it holds no registers across the walk (with it the fp64 kernel spilled at the 32
// registers of full occupancy; ptxas -v).
__device__ __forceinline__ BceTileDescriptor load_tile_descriptor(const BceTileDescriptor* d) {
  const int4* words = reinterpret_cast<const int4*>(d);
  int4 w[3];
#pragma unroll
  for (int i = 0; i < 3; ++i) w[i] = __ldg(words + i);
  BceTileDescriptor t;
  memcpy(&t, w, sizeof w);
  return t;
}

// The fourth word: {block, piece, pieces, unused}.
__device__ __forceinline__ int4 load_tile_split(const BceTileDescriptor* d) {
  return __ldg(reinterpret_cast<const int4*>(d) + 3);
}
static_assert(offsetof(BceTileDescriptor, block) == 48 && offsetof(BceTileDescriptor, piece) == 52 &&
              offsetof(BceTileDescriptor, pieces) == 56);

// Where a thread is in its row: slot i of the row (lane, lane + lanes, ...) at `slot` of the
// block's arrays.
struct BceSlotWalk {
  std::int64_t slot;
  std::int32_t i;
};

// Slots [walk.i, end) of a row, `lanes` apart in the row and `step` apart in the arrays, added
// to sum in ascending order, four at a time: their index and value loads issued together, then
// their four gathers together. A slot of the last group past `end` reloads the group's first
// (the same address: no further memory request), so every load is unconditional and no branch
// stands between them. A loop that tests its bound each slot, even unrolled, walks slot by slot:
// the next slot's loads wait behind the bound's branch and the previous gather's use, a memory
// latency each (the ptx of `#pragma unroll 4` over such a loop: a branch after every slot;
// cuda_ell's grouped_slot_sum says what that cost ELL).
template <typename Value>
__device__ __forceinline__ void walk_slots(Value& sum, BceSlotWalk& walk, std::int32_t end,
                                           std::int32_t lanes, std::int64_t step,
                                           const Value* __restrict__ values,
                                           const std::int32_t* __restrict__ offsets,
                                           const Value* __restrict__ x) {
  while (walk.i < end) {
    std::int32_t column[4];
    Value value[4];
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const std::int64_t s = walk.i + k * lanes < end ? walk.slot + k * step : walk.slot;
      column[k] = __ldg(offsets + s);
      value[k] = __ldg(values + s);
    }
    Value gathered[4];
#pragma unroll
    for (int k = 0; k < 4; ++k) gathered[k] = __ldg(x + column[k]);
    // Stops at the row's first slot at or past `end` (the next walk starts there).
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      if (walk.i < end) {
        sum += value[k] * gathered[k];
        walk.i += lanes;
        walk.slot += step;
      }
    }
  }
}

// The Hopper variant: each row reads exactly its own length (a Length: one byte or 4,
// bce_length_bytes; or the block's one length where all its rows have it), so no slot is
// tested and no padding is read; the rows of a wide block are shared by `lanes` consecutive
// lanes (bce_lanes_per_row: 1, 2, 4, 32 or the whole CUDA block, uniform over the tile, so every
// branch on it is uniform), lane l taking slots l, l + lanes, ..., reduced by xor shuffles
// within the warp and, for a block-wide row, across the warps through shared memory. The block
// is interleaved for its lanes (bce_layout.hpp), so thread t of a tile starts at its
// descriptor's slot_base + t and steps by N * lanes, and a warp's 32 lanes read 32 consecutive
// slots at every step. Threads past the block's end stay for the shuffles (full warps:
// blockDim.x is a multiple of 32 and lanes divides 32 or equals blockDim.x).
// Latency first: everything the tile needs comes in one step (its descriptor), the row's
// length and its caller's row (rowNo, unless the tile's rows are consecutive caller rows) are
// requested at once and waited for only where used: the slots below the block's shortest row
// are walked before the length is needed, and the caller's row only at the store. With
// kTileRuns the descriptor is not loaded but computed from the launch's parameters
// (bce_tile_runs.hpp says when), Runs holding no more runs than the launch has
// (bce_launch_runs).
// A row split into pieces (pieces > 1, block-wide rows only): each piece's CUDA block walks
// slots [q P, (q + 1) P) of the row (P = lanes x kBceSlotsPerLanePerPiece), stores its sum, and
// the last piece to arrive (an atomic count, after a fence, as CUDA's threadFenceReduction
// sample) adds the sums in piece order (the same sum on every run) and writes y; it resets the
// count for the next launch, which the stream orders after this one.
template <typename Value, bool kTileRuns, typename Length, typename Runs>
__global__ void __launch_bounds__(kBceMaxBlockSize, kBceFullOccupancyBlocks)
    bce_hopper_kernel(BceHopperArrays a, const __grid_constant__ Runs runs,
                      const Value* __restrict__ values, const Value* __restrict__ x,
                      Value* __restrict__ y, Value alpha, Value beta, Value* partials) {
  const BceTileDescriptor t = kTileRuns
                                  ? bce_tile_from_runs(runs, static_cast<std::int32_t>(blockIdx.x))
                                  : load_tile_descriptor(a.tiles + blockIdx.x);
  const std::int32_t lanes = t.lanes;
  const std::int32_t row_in_tile = static_cast<std::int32_t>(threadIdx.x) / lanes;
  const std::int32_t lane = static_cast<std::int32_t>(threadIdx.x) & (lanes - 1);
  const std::int64_t position = std::int64_t{t.first_row} + row_in_tile;
  const bool active = position < t.end_row;
  const bool writes = active && lane == 0;
  const std::int64_t row = !writes           ? 0
                           : t.row_base >= 0 ? std::int64_t{t.row_base} + row_in_tile
                                             : std::int64_t{__ldg(a.row_no + position)};
  const auto* lengths = static_cast<const Length*>(a.row_lengths);
  const std::int32_t length = !active                 ? 0
                              : t.uniform_length >= 0 ? t.uniform_length
                                                      : std::int32_t{__ldg(lengths + position)};
  BceSlotWalk walk{.slot = t.slot_base + threadIdx.x, .i = t.first_slot + lane};
  Value sum = 0;
  walk_slots(sum, walk, active ? min(t.min_length, t.slot_end) : 0, lanes, t.step, values,
             a.offsets, x);
  walk_slots(sum, walk, min(length, t.slot_end), lanes, t.step, values, a.offsets, x);
  for (std::int32_t offset = min(lanes, 32) / 2; offset > 0; offset /= 2)
    sum += __shfl_xor_sync(0xffffffffu, sum, offset);
  if (lanes > 32) {
    // A block-wide row (lanes == blockDim.x): warp w's total to shared memory, then warp 0
    // adds them by one more butterfly (lane w < warps holds warp w's, the rest 0), as
    // bce_reference_multiply replays.
    __shared__ Value warp_totals[kBceMaxWarpsPerBlock];
    const int warp = static_cast<int>(threadIdx.x) / 32;
    const int warp_lane = static_cast<int>(threadIdx.x) & 31;
    if (warp_lane == 0) warp_totals[warp] = sum;
    __syncthreads();
    if (warp != 0) return;
    sum = warp_lane < lanes / 32 ? warp_totals[warp_lane] : Value(0);
    for (int offset = 16; offset > 0; offset /= 2)
      sum += __shfl_xor_sync(0xffffffffu, sum, offset);
    // A row cut into pieces; never where the tiles are runs (bce_tile_runs).
    if constexpr (!kTileRuns) {
      const int4 split = load_tile_split(a.tiles + blockIdx.x);
      const std::int32_t block = split.x, piece = split.y, pieces = split.z;
      if (pieces > 1) {
        if (threadIdx.x != 0) return;
        const std::int64_t row_in_block = position - __ldg(a.block_rows + block);
        Value* row_partials =
            partials + __ldg(a.block_partial_first + block) + row_in_block * pieces;
        std::int32_t* arrived = a.counters + __ldg(a.block_counter_first + block) + row_in_block;
        row_partials[piece] = sum;
        __threadfence();  // the sum is visible before the count says it is there
        if (atomicAdd(arrived, 1) != pieces - 1) return;
        __threadfence();
        sum = 0;
        for (std::int32_t q = 0; q < pieces; ++q)
          sum += *static_cast<volatile const Value*>(row_partials + q);
        *arrived = 0;
      }
    }
  }
  if (writes) catalogue_detail::store_axpby(y + row, alpha, sum, beta);
}

template <typename Value>
class CudaBceOperator final : public SpmvOperator {
 public:
  // descriptors: bce_tile_descriptors (hopper; the paper kernel reads the tables and rowNo as
  // Algorithm 4); runs: bce_tile_runs of them, if they serve (the descriptors then stay on the
  // host).
  CudaBceOperator(const BceLayout<Value>& bce, const BceTiles& tiles,
                  const std::vector<BceTileDescriptor>& descriptors,
                  const std::optional<BceTileRuns>& runs, BceVariant variant,
                  const LaunchConfig& launch, Device& device)
      : rows_(bce.rows),
        tiles_(tiles.size()),
        tile_runs_(runs.has_value()),
        launch_runs_(bce_launch_runs(runs)),
        variant_(variant),
        launch_(launch),
        stream_(static_cast<cudaStream_t>(device.native_stream())) {
    std::vector<std::int64_t> block_rows = bce.block_row_offsets;
    block_rows.push_back(bce.rows);
    block_rows_ = upload(device, block_rows.data(), block_rows.size());
    if (variant == BceVariant::paper) {
      std::vector<std::int64_t> block_widths = bce.block_widths;
      block_widths.push_back(0);
      tile_block_ = upload(device, tiles.tile_block.data(), tiles.tile_block.size());
      tile_first_row_ = upload(device, tiles.tile_first_row.data(), tiles.tile_first_row.size());
      block_widths_ = upload(device, block_widths.data(), block_widths.size());
      block_pos_ = upload(device, bce.block_slot_offsets.data(), bce.block_slot_offsets.size());
    } else {
      if (!runs) descriptors_ = upload(device, descriptors.data(), descriptors.size());
      lengths_in_bytes_ = bce.lengths_in_bytes();
      row_lengths_ = lengths_in_bytes_
                         ? upload(device, bce.row_length_bytes.data(), bce.row_length_bytes.size())
                         : upload(device, bce.row_lengths.data(), bce.row_lengths.size());
      if (tiles.counters > 0) {
        block_partial_first_ =
            upload(device, tiles.block_partial_first.data(), tiles.block_partial_first.size());
        block_counter_first_ =
            upload(device, tiles.block_counter_first.data(), tiles.block_counter_first.size());
        partials_ = DeviceBuffer(device, static_cast<std::size_t>(tiles.partials) * sizeof(Value));
        counters_ =
            DeviceBuffer(device, static_cast<std::size_t>(tiles.counters) * sizeof(std::int32_t));
        device.fill_bytes(counters_.data(), 0, counters_.bytes());  // no piece has arrived
      }
    }
    row_no_ = upload(device, bce.row_no.data(), bce.row_no.size());
    offsets_ = upload(device, bce.offsets.data(), bce.offsets.size());
    values_ = upload(device, bce.values.data(), bce.values.size());
  }

  void apply(const void* x, void* y, double alpha, double beta) override {
    if (rows_ == 0 || tiles_ == 0) return;
    const auto grid = static_cast<unsigned>(tiles_);
    const auto* xv = static_cast<const Value*>(x);
    auto* yv = static_cast<Value*>(y);
    if (variant_ == BceVariant::paper) {
      const BcePaperArrays a{.tile_block = tile_block_.as<const std::int32_t>(),
                             .tile_first_row = tile_first_row_.as<const std::int32_t>(),
                             .block_rows = block_rows_.as<const std::int64_t>(),
                             .block_widths = block_widths_.as<const std::int64_t>(),
                             .block_pos = block_pos_.as<const std::int64_t>(),
                             .row_no = row_no_.as<const std::int32_t>(),
                             .offsets = offsets_.as<const std::int32_t>()};
      bce_paper_kernel<Value><<<grid, launch_.block_size, 0, stream_>>>(
          a, values_.as<const Value>(), xv, yv, static_cast<Value>(alpha), static_cast<Value>(beta));
    } else {
      const BceHopperArrays a{.tiles = descriptors_.as<const BceTileDescriptor>(),
                              .row_lengths = row_lengths_.data(),
                              .row_no = row_no_.as<const std::int32_t>(),
                              .offsets = offsets_.as<const std::int32_t>(),
                              .block_rows = block_rows_.as<const std::int64_t>(),
                              .block_partial_first = block_partial_first_.as<const std::int64_t>(),
                              .block_counter_first = block_counter_first_.as<const std::int64_t>(),
                              .counters = counters_.as<std::int32_t>()};
      const auto a_value = static_cast<Value>(alpha);
      const auto b_value = static_cast<Value>(beta);
      std::visit(
          [&]<typename Runs>(const Runs& runs) {
            const auto launch = [&]<bool kTileRuns, typename Length>() {
              bce_hopper_kernel<Value, kTileRuns, Length, Runs>
                  <<<grid, launch_.block_size, 0, stream_>>>(a, runs, values_.as<const Value>(),
                                                             xv, yv, a_value, b_value,
                                                             partials_.as<Value>());
            };
            if (tile_runs_ && lengths_in_bytes_) launch.template operator()<true, std::uint8_t>();
            if (tile_runs_ && !lengths_in_bytes_) launch.template operator()<true, std::int32_t>();
            // The descriptors' launches pass the smallest runs only (unread).
            if constexpr (std::is_same_v<Runs, BceTileRunsOf<1>>) {
              if (!tile_runs_ && lengths_in_bytes_)
                launch.template operator()<false, std::uint8_t>();
              if (!tile_runs_ && !lengths_in_bytes_)
                launch.template operator()<false, std::int32_t>();
            }
          },
          launch_runs_);
    }
    SPMVD_CUDA_CHECK_LAUNCH();
  }

  Precision precision() const noexcept override { return precision_of<Value>(); }
  std::size_t device_bytes() const noexcept override {
    return tile_block_.bytes() + tile_first_row_.bytes() + block_rows_.bytes() +
           block_widths_.bytes() + block_pos_.bytes() + descriptors_.bytes() +
           row_lengths_.bytes() + row_no_.bytes() + offsets_.bytes() + values_.bytes() +
           block_partial_first_.bytes() + block_counter_first_.bytes() + partials_.bytes() +
           counters_.bytes();
  }

 private:
  std::int64_t rows_;
  std::int64_t tiles_;
  bool tile_runs_;                   // hopper: the descriptors as launch parameters
  BceLaunchRuns launch_runs_;        // hopper: those parameters (bce_launch_runs)
  bool lengths_in_bytes_ = false;    // hopper: row_lengths_ in a byte each, else int32
  BceVariant variant_;
  LaunchConfig launch_;
  cudaStream_t stream_;
  DeviceBuffer block_rows_;
  DeviceBuffer tile_block_, tile_first_row_, block_widths_, block_pos_;  // paper
  DeviceBuffer descriptors_, row_lengths_;                                // hopper
  DeviceBuffer row_no_, offsets_, values_;
  // hopper's split rows: where each block's piece sums and counts start, the sums, the counts
  DeviceBuffer block_partial_first_, block_counter_first_, partials_, counters_;
};

// The matrix's DF features (`df`, as check_candidate saw them) give the block shapes, the shapes
// the tiles, and the tiles' lanes per block the layout's interleave.
template <typename Value>
std::unique_ptr<SpmvOperator> build_as(const CsrMatrix<double>& matrix, const MatrixFeatures& df,
                                       const Candidate& candidate, Device& device) {
  const CudaBceParams params = CudaBceRules::params_of(candidate);
  const auto variant = static_cast<BceVariant>(params.variant);
  // The host phase: the tiling the candidate was chosen with (its resident_threads, checked
  // against grid_size), Algorithm 3's reordering, the layout and (hopper) the tiles'
  // descriptors.
  struct HostLayout {
    BceTiles tiles;
    BceLayout<Value> bce;
    std::vector<BceTileDescriptor> descriptors;
    std::optional<BceTileRuns> runs;
  };
  const HostLayout host = without_device_lock([&] {
    HostLayout h;
    h.tiles = make_bce_tiles(bce_block_shapes(df, params.boundaries), variant,
                             candidate.launch.block_size, params.resident_threads);
    h.bce = make_bce_layout<Value>(matrix, params.boundaries, h.tiles.block_lanes);
    if (variant == BceVariant::hopper) {
      h.descriptors = bce_tile_descriptors(h.bce, h.tiles);
      h.runs =
          bce_tile_runs(h.descriptors, candidate.launch.block_size, params.resident_threads);
    }
    return h;
  });
  return std::make_unique<CudaBceOperator<Value>>(host.bce, host.tiles, host.descriptors,
                                                  host.runs, variant, candidate.launch, device);
}

}  // namespace

std::unique_ptr<SpmvOperator> CudaBceRules::build(const CsrMatrix<double>& matrix,
                                                  Precision precision, const Candidate& candidate,
                                                  Device& device) {
  // The candidate against this matrix's DF: params, block size, boundaries, grid_size.
  const MatrixFeatures df = without_device_lock([&] {
    return distribution_features(row_length_distribution(matrix.row_offsets), matrix.cols);
  });
  check_candidate(candidate, df);
  check_gpu_device("cuda_bce", device);
  if (precision == Precision::fp32) return build_as<float>(matrix, df, candidate, device);
  return build_as<double>(matrix, df, candidate, device);
}

}  // namespace spmvd
