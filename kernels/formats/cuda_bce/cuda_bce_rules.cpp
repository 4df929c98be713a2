#include "kernels/formats/cuda_bce/cuda_bce_rules.hpp"

#include <tbb/parallel_for.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <span>
#include <string>

#include "core/error.hpp"
#include "core/part_features.hpp"
#include "kernels/formats/common/builder_checks.hpp"
#include "kernels/formats/common/padding_stop_walk.hpp"
#include "kernels/formats/common/rules_support.hpp"
#include "kernels/formats/cuda_csr_vector/cuda_csr_vector_rules.hpp"
#include "kernels/formats/cuda_ell/cuda_ell_rules.hpp"
#include "partition/opa.hpp"
#include "partition/row_vector_sets.hpp"

namespace spmvd {
namespace {

// The block size the predicted OPA prices its parts at (the middle of kBceBlockSizes; the
// candidates then sweep all three with the same boundaries).
constexpr std::uint32_t kPredictedBlockSize = 256;

constexpr std::array<BceVariant, 2> kVariants{BceVariant::paper, BceVariant::hopper};

// Rows shared by `walkers` (lanes, warps) as the rows each walker walks: every row of `length`
// slots is `walkers` rows of ceil(length / walkers) slots (the same slots and bytes, the chain
// each walker walks). The sets are ascending, so equal lengths are neighbours: merged as they
// come, without a map (OPA prices up to 8,256 blocks a matrix); part_features merges any that
// are not. The identity at one walker.
std::vector<RowLengthCount> walked_rows(const std::vector<RowLengthCount>& sets,
                                        std::int64_t walkers) {
  std::vector<RowLengthCount> out;
  out.reserve(sets.size());
  for (const RowLengthCount& set : sets) {
    const std::int64_t length = (set.length + walkers - 1) / walkers;
    if (!out.empty() && out.back().length == length)
      out.back().rows += set.rows * walkers;
    else
      out.push_back({length, set.rows * walkers});
  }
  return out;
}

// The slots a warp of the hopper kernel walks in a block of these one-lane rows (walked_rows of
// the block's DF slice, ascending): each row stops at its own length, so the warp walks the
// longest of its 32, not the block's width (the paper variant walks the width, padding and
// all). Expected over rows drawn independently from the slice (a block keeps its rows' order,
// so a warp's rows are neighbours only in the caller's order; the `lanes` lanes of one row
// walk alike, so a warp holds 32 / lanes independent rows): expected_warp_walk with R = 32 /
// lanes. Rounded, at least 1.
std::int64_t hopper_warp_walked_width(const std::vector<RowLengthCount>& sets,
                                      std::int32_t lanes) {
  if (sets.empty()) return 0;
  return std::max<std::int64_t>(1, std::llround(expected_warp_walk(sets, 32.0 / lanes)));
}

// How a 1-4-lane block is priced: as its kernel walks it (the prediction), or as its layout
// stores it, padded to its width with one lane a row (OPA's cost: the layout stores, copies and
// holds the padding even where the hopper kernel does not read it, so a price without it let OPA
// merge short rows with rows of 50000 into one padded block, H100, 2026-11-25).
enum class BlockPricing { walked, stored };

// One block (its DF slice `sets`) as the part it runs as, for bce_lanes_per_row's lanes per row
// (the same function the tiles use, so the model sees the kernel's critical path).
FormatPart block_part(const MatrixFeatures& whole,
                      const std::optional<std::span<const std::int64_t>>& row_runs_of,
                      std::vector<RowLengthCount> sets, BceVariant variant,
                      std::uint32_t block_size, std::int64_t resident_threads,
                      BlockPricing pricing, std::uint64_t length_bytes) {
  BceBlockShape shape{.rows = 0, .width = sets.empty() ? 0 : sets.back().length};
  for (const RowLengthCount& set : sets) shape.rows += set.rows;
  const std::int32_t lanes = bce_lanes_per_row(variant, shape, block_size, resident_threads);
  FormatPart part;
  part.runs = FormatPart::Runs::gpu;
  part.launch = 0;  // every block in the one launch of Algorithm 4
  // What the reordering costs beyond the part's own format (bce_row_runs.hpp): the row lengths
  // (hopper, where the block's rows have more than one: `length_bytes` a row), rowNo (hopper
  // tiles of consecutive caller rows skip it: a block of one run), and a y sector again per run
  // where the block's rows are not consecutive. Without the feature (not extracted) the runs
  // are unknown and not charged.
  const std::int64_t row_runs =
      !row_runs_of || sets.empty()
          ? 0
          : bce_block_row_runs(whole, *row_runs_of, sets.front().length, sets.back().length);
  const auto rows = static_cast<std::uint64_t>(shape.rows);
  const bool hopper = variant == BceVariant::hopper;
  part.row_map_bytes = (hopper && sets.size() > 1 ? rows * length_bytes : 0) +
                       (!hopper || row_runs > 1 ? rows * sizeof(std::int32_t) : 0);
  part.scattered_row_runs = row_runs > 1 ? row_runs : 0;
  if (lanes <= 4) {
    // ELL (column-major at 1 lane, interleaved at 2-4: coalesced either way), one CUDA block
    // per block_size / lanes rows. The paper variant, and any block as stored, as cuda_ell at
    // the block's width with every row padded to it (Algorithm 4 reads every slot; OPA's stored
    // price pays for every slot it stores; so the ell family, which walks a padded ELL's rows
    // to their first padding slot, is shown no padding); the hopper variant's 1-4 lanes a row
    // as walked: that many one-lane rows (walked_rows), as wide as its warps walk
    // (hopper_warp_walked_width).
    const bool walked = hopper && pricing == BlockPricing::walked;
    if (walked) {
      sets = walked_rows(sets, lanes);
    } else if (!sets.empty()) {
      sets = {{shape.width, shape.rows}};
    }
    const std::int64_t width = walked ? hopper_warp_walked_width(sets, lanes) : shape.width;
    part.features = part_features(whole, std::move(sets));
    part.candidate = Candidate{
        .format = kCudaEllFormatId,
        .params = FieldSet::of(CudaEllParams{.ell_width = static_cast<std::uint32_t>(width)}),
        .launch = {.block_size = block_size,
                   .threads_per_row = 1,
                   .grid_size = blocks_for(static_cast<std::uint64_t>(part.features.rows),
                                           block_size)}};
    return part;
  }
  // 32 lanes a row. A block-wide row is block_size / 32 warps (times its bce_row_pieces CUDA
  // blocks, for a split row) each walking a 1 / pieces share of it: predicted as that many rows
  // of ceil(length / pieces) (walked_rows).
  const std::int32_t row_pieces = bce_row_pieces(variant, shape, lanes, block_size);
  const std::int64_t pieces = lanes / 32 * row_pieces;
  // A block-wide row is a CUDA block a piece, priced by waves too (FormatPart::row_blocks).
  if (lanes == static_cast<std::int32_t>(block_size)) part.row_blocks = shape.rows * row_pieces;
  part.features = part_features(whole, walked_rows(sets, pieces));
  part.candidate = Candidate{
      .format = kCudaCsrVectorFormatId,
      .params = {},
      .launch = {.block_size = block_size,
                 .threads_per_row = 32,
                 .grid_size = blocks_for(static_cast<std::uint64_t>(part.features.rows) * 32,
                                         block_size)}};
  return part;
}

std::vector<Candidate> candidates_for(const CudaBceRules& rules, const MatrixFeatures& features,
                                      const std::vector<std::int64_t>& boundaries,
                                      std::int64_t resident_threads,
                                      std::span<const BceVariant> variants = kVariants) {
  const std::vector<BceBlockShape> shapes = bce_block_shapes(features, boundaries);
  std::vector<Candidate> out;
  for (const BceVariant variant : variants) {
    for (const std::uint32_t block : kBceBlockSizes) {
      const std::int64_t tiles = bce_tile_count(shapes, variant, block, resident_threads);
      if (tiles > std::numeric_limits<std::int32_t>::max()) continue;
      out.push_back(Candidate{
          .format = rules.id(),
          .params = FieldSet::of(CudaBceParams{.boundaries = boundaries,
                                               .variant = static_cast<std::int64_t>(variant),
                                               .resident_threads = resident_threads}),
          .launch = {.block_size = block,
                     .threads_per_row = 1,
                     .grid_size = static_cast<std::uint32_t>(std::max<std::int64_t>(tiles, 1))}});
    }
  }
  return out;
}

// The candidates of `boundaries` (candidates_for), and beside them, where OPA split the rows,
// the hopper variant of the one-block partition (k = 1) where its padded slots stay within
// cuda_ell's bound (kEllMaxPaddingRatio: it stores the same slots). Why: one block keeps the
// caller's row order (no rowNo, y written in order, x gathered as the matrix lies), which
// neither the paper's T_c nor OPA's stored price weighs; where the reordering costs more than
// the padding it saves, measuring the two tells (H100, 2026-12-07: BCE's best ran 0.63-0.69x
// its time on road-6M and 0.66-0.75x on delaunay_n16-x48 with them, docs/BENCHMARKS.md).
std::vector<Candidate> with_one_block(const CudaBceRules& rules, const MatrixFeatures& features,
                                      const std::vector<std::int64_t>& boundaries,
                                      std::int64_t resident_threads) {
  std::vector<Candidate> out = candidates_for(rules, features, boundaries, resident_threads);
  if (boundaries.empty() ||
      features.rows * features.row_length_max > kEllMaxPaddingRatio * features.nnz) {
    return out;
  }
  constexpr std::array<BceVariant, 1> kHopper{BceVariant::hopper};
  for (Candidate& c : candidates_for(rules, features, {}, resident_threads, kHopper))
    out.push_back(std::move(c));
  return out;
}

// M_1 .. M_{k-1} of an OPA result (its last upper length is the longest row).
std::vector<std::int64_t> boundaries_of(const OptimalPartition& partition) {
  std::vector<std::int64_t> out = partition.upper_lengths;
  if (!out.empty()) out.pop_back();
  return out;
}

// T_c(C) for OPA over groups of sets: a block of groups [first, last] (OPA hands over only its
// rows and width) is found again by its width (the last group's longest length) and its rows
// (prefix sums over groups), and priced as the cuda_ell part of the original sets it spans.
// OPA's O(G^2) dynamic program asks for every block, so all G(G+1)/2 are predicted up front,
// side by side (each prediction builds the part's features from its sets: ~20 us, so 8,256 of
// them took 150 ms one after another on a 2-core host for an R-MAT graph's 128 groups).
class PredictedGroupCost final : public BlockCost {
 public:
  PredictedGroupCost(const PartTimePredictor& predictor, const MatrixFeatures& features,
                     std::vector<std::int64_t> group_ends, std::int64_t resident_threads)
      : group_ends_(std::move(group_ends)) {
    prefix_rows_.push_back(0);
    std::int64_t begin = 0;
    for (const std::int64_t end : group_ends_) {
      std::int64_t rows = 0;
      for (std::int64_t s = begin; s < end; ++s) rows += features.distribution[s].rows;
      prefix_rows_.push_back(prefix_rows_.back() + rows);
      group_widths_.push_back(features.distribution[end - 1].length);
      begin = end;
    }
    const auto groups = static_cast<std::int64_t>(group_ends_.size());
    block_ms_.assign(static_cast<std::size_t>(groups * groups), std::nullopt);
    const auto row_runs = cuda_bce_row_runs_in_place(features);
    tbb::parallel_for(std::int64_t{0}, groups * groups, [&](std::int64_t index) {
      const std::int64_t first = index / groups, last = index % groups;
      if (first > last) return;
      const std::int64_t set_begin = first == 0 ? 0 : group_ends_[first - 1];
      std::vector<RowLengthCount> sets(features.distribution.begin() + set_begin,
                                       features.distribution.begin() + group_ends_[last]);
      // What the block adds to the one launch (its fixed cost is the launch's, paid once), as
      // stored: OPA weighs the padding a merge stores. Its lengths' bytes as if it were the
      // layout's one block (the other blocks are not chosen yet).
      const std::uint64_t length_bytes = bce_length_bytes(std::span(&sets, 1));
      block_ms_[static_cast<std::size_t>(index)] =
          part_ms_in_launch(block_part(features, row_runs, std::move(sets), BceVariant::hopper,
                                       kPredictedBlockSize, resident_threads,
                                       BlockPricing::stored, length_bytes),
                            predictor);
    });
  }
  // The groups as OPA's sets: {width of the group, rows of the group}.
  std::vector<RowLengthCount> groups() const {
    std::vector<RowLengthCount> out;
    for (std::size_t g = 0; g < group_widths_.size(); ++g)
      out.push_back({group_widths_[g], prefix_rows_[g + 1] - prefix_rows_[g]});
    return out;
  }
  double time_ms(const RowVectorSetRange& block) const override {
    const auto last = static_cast<std::int64_t>(
        std::lower_bound(group_widths_.begin(), group_widths_.end(), block.width) -
        group_widths_.begin());
    const std::int64_t first_prefix = prefix_rows_[last + 1] - block.rows;
    const auto first = static_cast<std::int64_t>(
        std::lower_bound(prefix_rows_.begin(), prefix_rows_.end(), first_prefix) -
        prefix_rows_.begin());
    const auto groups = static_cast<std::int64_t>(group_ends_.size());
    const std::optional<double>& ms = block_ms_[static_cast<std::size_t>(first * groups + last)];
    if (!ms) {
      unpredictable_ = true;
      return std::numeric_limits<double>::max() / 1e6;  // finite: sums stay ordered
    }
    return *ms;
  }
  bool unpredictable() const noexcept { return unpredictable_; }

 private:
  std::vector<std::int64_t> group_ends_;  // set index one past each group
  std::vector<std::int64_t> prefix_rows_;
  std::vector<std::int64_t> group_widths_;
  std::vector<std::optional<double>> block_ms_;  // [first * groups + last], first <= last
  mutable bool unpredictable_ = false;
};

}  // namespace

CudaBceParams CudaBceRules::params_of(const Candidate& candidate) {
  CudaBceParams params = candidate.params.as<CudaBceParams>("cuda_bce");
  if (params.variant != static_cast<std::int64_t>(BceVariant::paper) &&
      params.variant != static_cast<std::int64_t>(BceVariant::hopper)) {
    throw_invalid("cuda_bce: variant " + std::to_string(params.variant) +
                  " is neither 0 (paper) nor 1 (hopper)");
  }
  return params;
}

void CudaBceRules::check_candidate(const Candidate& candidate, const MatrixFeatures& features) {
  check_candidate_format("cuda_bce", kCudaBceFormatId, candidate);
  const CudaBceParams params = params_of(candidate);
  check_one_of("cuda_bce", "block_size", candidate.launch.block_size, kBceBlockSizes);
  if (candidate.launch.threads_per_row != 1) {
    throw_invalid("cuda_bce: threads_per_row " + std::to_string(candidate.launch.threads_per_row) +
                  " must be 1 (the hopper variant's lanes follow from each block's width)");
  }
  if (params.resident_threads < 0) {
    throw_invalid("cuda_bce: resident_threads " + std::to_string(params.resident_threads) +
                  " is negative");
  }
  const std::vector<BceBlockShape> shapes = bce_block_shapes(features, params.boundaries);
  const std::int64_t tiles = std::max<std::int64_t>(
      bce_tile_count(shapes, static_cast<BceVariant>(params.variant), candidate.launch.block_size,
                     params.resident_threads),
      1);
  if (candidate.launch.grid_size != tiles) {
    throw_invalid("cuda_bce: grid_size " + std::to_string(candidate.launch.grid_size) +
                  " differs from the " + std::to_string(tiles) + " tiles these boundaries give");
  }
}

bool CudaBceRules::admissible(const MatrixFeatures& features, const DeviceInfo& device,
                              Precision precision, std::uint64_t memory_budget_bytes) const {
  if (!device.is_gpu) return false;
  if (features.rows >= std::numeric_limits<std::int32_t>::max()) return false;
  return some_candidate_fits(*this, features, device, precision, memory_budget_bytes);
}

std::vector<Candidate> CudaBceRules::candidates(const MatrixFeatures& features,
                                                const DeviceInfo& device) const {
  // Paper 000 Sec. 5.3: L = the threads below which an SM is underused (192 on the K20c, its
  // cores per SM), here the threads one SM keeps resident. Not the rows that fill the whole
  // GPU: every block shares one launch, so a block of few rows runs beside the others instead
  // of holding the GPU, and with L = SMs x threads (270336 on an H100) every matrix of fewer
  // rows prices each block at W x L and OPA merges all into one ELL block: 5e8 slots (6 GB)
  // for 100000 rows of 3 and one of 5000 (test ModelFreeCandidatesSplitOffALongRow).
  const std::int64_t lower_limit_rows = std::max(device.max_threads_per_sm, 0);
  const BlockedEllBlockCost cost(BlockedEllTimeCoefficients{
      .transfer_elements_per_ms = 1.0, .sm_elements_per_ms = 1.0,
      .lower_limit_rows = lower_limit_rows, .sm_count = std::max(device.sm_count, 1)});
  const RowVectorSets sets(features.distribution);
  return with_one_block(*this, features, boundaries_of(optimal_partition(sets, cost)),
                        bce_resident_threads(device));
}

std::vector<Candidate> CudaBceRules::candidates_chosen_by(const PartTimePredictor& predictor,
                                                          const MatrixFeatures& features,
                                                          const DeviceInfo& device) const {
  const auto sets = static_cast<std::int64_t>(features.distribution.size());
  if (sets == 0) return candidates(features, device);
  const std::int64_t groups = std::min(sets, kBceMaxPredictedGroups);
  std::vector<std::int64_t> group_ends;
  for (std::int64_t g = 1; g <= groups; ++g) group_ends.push_back(g * sets / groups);
  const PredictedGroupCost cost(predictor, features, std::move(group_ends),
                                bce_resident_threads(device));
  const std::vector<RowLengthCount> group_sets = cost.groups();
  const OptimalPartition partition = optimal_partition(RowVectorSets(group_sets), cost);
  if (cost.unpredictable()) return candidates(features, device);
  return with_one_block(*this, features, boundaries_of(partition), bce_resident_threads(device));
}

std::optional<FieldSet> CudaBceRules::own_features(const CsrMatrix<double>& matrix,
                                                  const MatrixFeatures& common) const {
  return FieldSet::of(compute_bce_row_runs(matrix, common.distribution));
}

std::uint64_t CudaBceRules::device_bytes(const MatrixFeatures& features, Precision precision,
                                         const Candidate& candidate) const {
  const CudaBceParams params = params_of(candidate);
  const auto variant = static_cast<BceVariant>(params.variant);
  const std::vector<BceBlockShape> shapes = bce_block_shapes(features, params.boundaries);
  // Each block's rows x its width padded to a multiple of its lanes (make_bce_layout), and
  // (hopper) a piece sum per piece and an arrival count per row of the split blocks.
  std::uint64_t slots = 0, partials = 0, counters = 0;
  for (const BceBlockShape& shape : shapes) {
    const std::int32_t lanes =
        bce_lanes_per_row(variant, shape, candidate.launch.block_size, params.resident_threads);
    slots += static_cast<std::uint64_t>(shape.rows) *
             static_cast<std::uint64_t>(bce_padded_width(shape.width, lanes));
    const std::int32_t pieces =
        bce_row_pieces(variant, shape, lanes, candidate.launch.block_size);
    if (pieces > 1) {
      partials += static_cast<std::uint64_t>(shape.rows) * static_cast<std::uint64_t>(pieces);
      counters += static_cast<std::uint64_t>(shape.rows);
    }
  }
  // As CudaBceOperator allocates them: Ap (k + 2 int64); rowNo (int32 a row); paper: the
  // tiles' block and first row (int32 each), Aw and blockPos (int64 a block); hopper: a
  // descriptor a tile, the rows' lengths (bce_length_bytes each), and where split rows exist,
  // where each block's piece sums and counts start (int64 each a block).
  const auto rows = static_cast<std::uint64_t>(features.rows);
  const auto blocks = static_cast<std::uint64_t>(shapes.size());
  const std::uint64_t tiles = candidate.launch.grid_size;
  std::uint64_t tables = (blocks + 1) * sizeof(std::int64_t) + rows * sizeof(std::int32_t);
  if (variant == BceVariant::paper) {
    tables += tiles * 2 * sizeof(std::int32_t) + blocks * 2 * sizeof(std::int64_t);
  } else {
    tables += tiles * sizeof(BceTileDescriptor) +
              rows * bce_length_bytes(bce_block_distributions(features, params.boundaries)) +
              (counters > 0 ? blocks * 2 * sizeof(std::int64_t) : 0);
  }
  return slots * (sizeof(ColIndex) + value_bytes(precision)) + tables +
         partials * value_bytes(precision) + counters * sizeof(std::int32_t);
}

bool CudaBceRules::is_valid(const Candidate& candidate, const MatrixFeatures& features,
                            const DeviceInfo& device) const {
  if (!device.is_gpu) return false;
  try {
    check_candidate(candidate, features);
    return true;
  } catch (const Error&) {
    return false;
  }
}

std::vector<FormatPart> CudaBceRules::parts(const MatrixFeatures& features,
                                            const Candidate& candidate) const {
  const CudaBceParams params = params_of(candidate);
  const auto row_runs = cuda_bce_row_runs_in_place(features);
  std::vector<std::vector<RowLengthCount>> blocks =
      bce_block_distributions(features, params.boundaries);
  const std::uint64_t length_bytes = bce_length_bytes(blocks);
  std::vector<FormatPart> out;
  for (std::vector<RowLengthCount>& sets : blocks)
    out.push_back(block_part(features, row_runs, std::move(sets),
                             static_cast<BceVariant>(params.variant),
                             candidate.launch.block_size, params.resident_threads,
                             BlockPricing::walked, length_bytes));
  return out;
}

std::vector<Candidate> CudaBceRules::row_block_candidates(const MatrixFeatures& features,
                                                          const DeviceInfo& device) const {
  if (!device.is_gpu) return {};
  constexpr std::array<BceVariant, 1> kHopper{BceVariant::hopper};
  return candidates_for(*this, features, {}, bce_resident_threads(device), kHopper);
}

}  // namespace spmvd
