#include "kernels/formats/cuda_strip/cuda_strip_rules.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <string>

#include "core/csr_matrix.hpp"
#include "core/error.hpp"
#include "core/part_features.hpp"
#include "kernels/formats/common/rules_support.hpp"
#include "kernels/formats/cuda_bce/bce_row_runs.hpp"
#include "kernels/formats/cuda_csr_vector/cuda_csr_vector_rules.hpp"
#include "kernels/formats/cuda_ell/cuda_ell_rules.hpp"
#include "kernels/formats/cuda_sell/cuda_sell_features.hpp"
#include "models/locality.hpp"
#include "models/occupancy.hpp"
#include "partition/row_length_distribution.hpp"
#include "partition/strip_partition.hpp"

namespace spmvd {
namespace {

bool compiled_width(std::uint32_t threads_per_row) {
  return std::find(kCsrVectorThreadsPerRow.begin(), kCsrVectorThreadsPerRow.end(),
                   threads_per_row) != kCsrVectorThreadsPerRow.end();
}

bool one_of(const auto& list, std::uint32_t value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

std::int64_t round_up(std::int64_t value, std::int64_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

// The DF as partition/ reads it.
RowLengthDistribution distribution_of(const MatrixFeatures& f) {
  return RowLengthDistribution{
      .rows = f.rows, .empty_rows = f.empty_rows, .nnz = f.nnz, .sets = f.distribution};
}

// The widest compiled lane count not above the mean row length (at least the narrowest): a
// row of mean length keeps every lane of its group busy for at least one step.
std::uint32_t width_for_mean(double mean) {
  std::uint32_t width = kCsrVectorThreadsPerRow.front();
  for (const std::uint32_t w : kCsrVectorThreadsPerRow)
    if (static_cast<double>(w) <= mean) width = w;
  return width;
}

Candidate strip_candidate(StripVariant variant, std::int64_t separator,
                          std::uint32_t threads_per_row, std::uint32_t csr_block,
                          std::uint32_t ell_block, std::int64_t block_rows = 0) {
  return Candidate{.format = kCudaStripFormatId,
                   .params = FieldSet::of(CudaStripParams{
                       .variant = static_cast<std::uint32_t>(variant),
                       .separator = separator,
                       .csr_threads_per_row = threads_per_row,
                       .csr_block_size = csr_block,
                       .ell_block_size = ell_block,
                       .block_rows = block_rows}),
                   .launch = {}};
}

// A separator this format offers: strictly inside, the rows below shorter than the longest
// (else the split only moves rows of one length between two kernels), and the ELL part within
// cuda_ell's padding bound (kEllMaxPaddingRatio: its kernel skips the padding, but the padding
// is stored).
bool offered_separator(const MatrixFeatures& f, std::int64_t separator) {
  if (separator <= 0 || separator >= f.rows) return false;
  const SortedRowRange below = sorted_row_range(f, separator, f.rows - separator);
  if (below.width >= f.row_length_max) return false;
  return (f.rows - separator) * below.width <= kEllMaxPaddingRatio * below.nnz;
}

// A matrix and device the format can partition at all: a GPU whose per-SM limits give a
// strip (a hand-written DeviceInfo may lack them), a DF, more than one row, and rows that the
// 32-bit permutation indexes.
bool may_partition(const MatrixFeatures& f, const DeviceInfo& device) {
  if (!device.is_gpu || f.rows <= 1 || f.distribution.empty() ||
      f.rows > std::numeric_limits<std::int32_t>::max())
    return false;
  try {
    CudaStripRules::strip_rows(device, 32, kStripDefaultBlockSize);
    return true;
  } catch (const Error&) {
    return false;
  }
}

// Rows of at least `length` entries.
std::int64_t rows_at_least(const MatrixFeatures& f, std::int64_t length) {
  std::int64_t rows = 0;
  for (const RowLengthCount& c : f.distribution)
    if (c.length >= length) rows += c.rows;
  return rows;
}

// The rows the hopper variant runs a block each without a model: those longer than
// block_per_row_min_length at the default block size.
std::int64_t model_free_block_rows(const MatrixFeatures& f, const DeviceInfo& device) {
  return rows_at_least(f, block_per_row_min_length(f.nnz, device, kStripDefaultBlockSize) + 1);
}

// The model-free separators at strips of `strip` rows, ascending, distinct (see candidates()).
std::vector<std::int64_t> model_free_separators(const MatrixFeatures& f, const DeviceInfo& device,
                                                std::int64_t strip) {
  std::vector<std::int64_t> out;
  for (const std::int64_t s : {round_up(rows_at_least(f, f.row_length_max), strip),
                               round_up(rows_at_least(f, std::max(device.warp_size, 1)), strip)})
    if (offered_separator(f, s) && std::find(out.begin(), out.end(), s) == out.end())
      out.push_back(s);
  std::sort(out.begin(), out.end());
  return out;
}

Candidate csr_part_candidate(std::int64_t rows, std::uint32_t threads_per_row,
                             std::uint32_t block_size, const DeviceInfo& device) {
  return Candidate{
      .format = kCudaCsrVectorFormatId,
      .params = {},
      .launch = {.block_size = block_size,
                 .threads_per_row = threads_per_row,
                 .grid_size = CudaCsrVectorRules::grid_size(rows, threads_per_row, block_size,
                                                            device)}};
}

// The slots the ELL part's warps walk, per row: its rows are sorted (descending), so a warp of
// 32 consecutive rows walks about its first row's length and stops there (each row stops at its
// own length), not the part's width: an ELL of uniform rows of this width moves the same bytes
// in the same steps, which is what the ell family's grid was timed on. Rounded to the nearest
// slot (cuda_ell's width is whole), at least 1 where the range has a row.
std::int64_t warp_walked_width(const SortedRowRange& range) {
  std::int64_t rows = range.empty_rows;
  for (const RowLengthCount& c : range.distribution) rows += c.rows;
  if (rows == 0) return 0;
  std::int64_t slots = 0;
  std::int64_t position = 0;  // sorted position of the next row, longest first
  for (auto set = range.distribution.rbegin(); set != range.distribution.rend(); ++set) {
    // The warps whose first row lies in this set walk its length, 32 rows each.
    const std::int64_t first_warp = (position + 31) / 32;
    const std::int64_t end_warp = (position + set->rows + 31) / 32;
    slots += (end_warp - first_warp) * 32 * set->length;
    position += set->rows;
  }
  return std::clamp<std::int64_t>((2 * slots + rows) / (2 * rows), 1,
                                  std::max<std::int64_t>(range.width, 1));
}

Candidate ell_part_candidate(std::int64_t rows, std::int64_t width, std::uint32_t block_size,
                             const DeviceInfo& device) {
  return Candidate{
      .format = kCudaEllFormatId,
      .params = FieldSet::of(CudaEllParams{.ell_width = static_cast<std::uint32_t>(width)}),
      .launch = {.block_size = block_size,
                 .threads_per_row = 1,
                 .grid_size = CudaCsrVectorRules::grid_size(rows, 1, block_size, device)}};
}

// A part of the sorted rows gathers x as the whole matrix sorted by length does: a warp's 32
// rows are neighbours in the sort, not in the caller's order, so the caller's x locality (its
// sectors per group of rows, and for ELL the rows' spans, which stand for how neighbouring rows
// share x) is not the part's. Where cuda_sell's hook measured the gathers of that sort
// (sorted_sectors_per_nonzero at a window of every row), the part takes them, and its span is
// raised to no less local than those gathers say (x_span_randomness >= x_gather_randomness).
// Without it the strip's parts of block-diagonal copies and graphs were predicted as local as
// the unsorted matrix: wiki-Vote-x24's strip at 22 us against 49 measured, Groebner-x16's at
// 23 against 50 (H100, 2026-11-24, the version-23 oracle's samples; docs/MODELS.md).
MatrixFeatures in_sorted_order(MatrixFeatures part, const MatrixFeatures& whole) {
  const std::optional<CudaSellFeaturesView> sell = cuda_sell_features_view(whole);
  if (!sell || std::find(sell->sort_windows.begin(), sell->sort_windows.end(), whole.rows) ==
                   sell->sort_windows.end())
    return part;
  part.x_sectors_per_nonzero = sorted_sectors_per_nonzero(whole, whole.rows);
  const double random_span = random_span_fraction(part.row_length_mean);
  part.mean_row_span_fraction =
      std::max(part.mean_row_span_fraction,
               x_gather_randomness(part, part.x_sectors_per_nonzero) * random_span);
  return part;
}

// The block rows (the first block_rows sorted rows) as the cuda_csr_vector part at 32 lanes
// that walks the same warp shares (block_row_warp_shares): its predicted time carries their
// critical path, the longest share.
FormatPart block_rows_part(const MatrixFeatures& whole, std::int64_t block_rows,
                           std::uint32_t block_size, const DeviceInfo& device) {
  // {share length, warps}, equal lengths merged by part_features (no map: the tuner predicts
  // every strip candidate's parts).
  std::vector<RowLengthCount> distribution;
  std::int64_t warps = 0;
  for (const RowLengthCount& set : sorted_row_range(whole, 0, block_rows).distribution)
    for (const RowLengthCount& share : block_row_warp_shares(set.length, block_size)) {
      distribution.push_back({share.length, share.rows * set.rows});
      warps += share.rows * set.rows;
    }
  return FormatPart{
      .runs = FormatPart::Runs::gpu,
      .features = in_sorted_order(part_features(whole, std::move(distribution)), whole),
      .candidate = csr_part_candidate(warps, 32, block_size, device),
      .transfer_values = 0};
}

// The runs of consecutive caller rows among a sorted range's rows: the sort is stable, so a run
// of rows of one length stays consecutive, and rows of two lengths that are neighbours in the
// caller's order are written apart. BCE's own feature counts the runs per length
// (bce_row_runs.hpp); a length split by the range's ends gets its share of them. nullopt where
// the feature was not extracted.
std::optional<std::int64_t> sorted_range_row_runs(const MatrixFeatures& whole,
                                                  const SortedRowRange& range) {
  const auto runs = cuda_bce_row_runs_in_place(whole);
  if (!runs) return std::nullopt;
  std::int64_t total = 0;
  std::size_t s = 0;
  for (const RowLengthCount& set : range.distribution) {
    while (s < whole.distribution.size() && whole.distribution[s].length < set.length) ++s;
    if (s == whole.distribution.size() || whole.distribution[s].length != set.length) continue;
    const std::int64_t all = whole.distribution[s].rows;
    total += ((*runs)[s] * set.rows + all - 1) / all;
  }
  return total;
}

// A part of the sorted rows, run as `candidate`, plus what the sort costs it beyond that
// format alone: the permutation it reads (4 bytes a row) and a y sector written again per run
// of consecutive caller rows (y[permutation[row]], as BCE's blocks write through rowNo).
FormatPart gpu_part(const MatrixFeatures& whole, const SortedRowRange& range,
                    Candidate candidate) {
  std::int64_t rows = range.empty_rows;
  for (const RowLengthCount& set : range.distribution) rows += set.rows;
  const std::int64_t runs = sorted_range_row_runs(whole, range).value_or(0);
  return FormatPart{.runs = FormatPart::Runs::gpu,
                    .features = in_sorted_order(
                        part_features(whole, range.distribution, range.empty_rows), whole),
                    .candidate = std::move(candidate),
                    .transfer_values = 0,
                    .row_map_bytes = static_cast<std::uint64_t>(rows) * sizeof(std::int32_t),
                    .scattered_row_runs = runs > 1 ? runs : 0};
}

// The whole matrix as cuda_ell in the caller's order (the sweep's "no partition").
FormatPart unsorted_ell_part(const MatrixFeatures& whole, const DeviceInfo& device) {
  return FormatPart{.runs = FormatPart::Runs::gpu,
                    .features = part_features(whole, whole.distribution, whole.empty_rows),
                    .candidate = ell_part_candidate(whole.rows, whole.row_length_max,
                                                    kStripDefaultBlockSize, device),
                    .transfer_values = 0};
}

double or_infinity(const std::optional<double>& ms) {
  return ms ? *ms : std::numeric_limits<double>::infinity();
}

// The predicted ELL part below each separator, shared by the sweeps of every CSR width: it
// does not depend on the width, and each width's strips are whole multiples of the warp-per-row
// strip, so the wider widths' separators are among the narrower's (predicted once, not once a
// width). nullopt where the part cannot be predicted.
class EllPartsBelow {
 public:
  EllPartsBelow(const PartTimePredictor& predictor, const MatrixFeatures& f,
                const DeviceInfo& device)
      : predictor_(predictor), f_(f), device_(device) {}
  std::optional<double> ms(const SortedRowsPart& below) {
    const auto known = ms_.find(below.first_row);
    if (known != ms_.end()) return known->second;
    std::optional<double> ms;
    if (below.first_row == 0) {
      // All rows below: no partition, i.e. cuda_ell itself, unsorted (its own candidate, with
      // its padding walked as the rows come).
      ms = predictor_.part_ms(unsorted_ell_part(f_, device_));
    } else {
      const SortedRowRange range = sorted_row_range(f_, below.first_row, below.rows);
      ms = predictor_.part_ms(gpu_part(
          f_, range,
          ell_part_candidate(below.rows, warp_walked_width(range), kStripDefaultBlockSize,
                             device_)));
    }
    ms_.emplace(below.first_row, ms);
    return ms;
  }

 private:
  const PartTimePredictor& predictor_;
  const MatrixFeatures& f_;
  const DeviceInfo& device_;
  std::map<std::int64_t, std::optional<double>> ms_;  // by the separator (first row below)
};

// The strip partition of paper 004 Sec. 5 at one CSR width. The paper sums the CSR-vector
// time of the strips above (Sec. 4.3, Eq. *: one term per wave); a strip's term here is what
// it adds to the predicted time of the CSR part that ends with it, so that the strips above a
// separator sum to the predicted time of that CSR part as one launch (the part predictions
// carry a launch floor, which a per-strip prediction would count once per strip). The rows
// below are one cuda_ell part. nullopt where a part cannot be predicted.
std::optional<StripPartition> sweep(const PartTimePredictor& predictor, const MatrixFeatures& f,
                                    const DeviceInfo& device, std::uint32_t threads_per_row,
                                    EllPartsBelow& ell_parts_below) {
  bool predicted = true;
  const auto ms_of = [&](const std::optional<double>& ms) {
    predicted = predicted && ms.has_value();
    return ms.value_or(0.0);
  };
  std::map<std::int64_t, double> csr_rows_ms{{0, 0.0}};  // CSR part of the first n rows
  const auto csr_part_ms = [&](std::int64_t rows) {
    const auto known = csr_rows_ms.find(rows);
    if (known != csr_rows_ms.end()) return known->second;
    const double ms = ms_of(predictor.part_ms(
        gpu_part(f, sorted_row_range(f, 0, rows),
                 csr_part_candidate(rows, threads_per_row, kStripDefaultBlockSize, device))));
    csr_rows_ms.emplace(rows, ms);
    return ms;
  };
  const StripPartitionCosts costs{
      .csr_vector_strip_ms =
          [&](const SortedRowsPart& strip) {
            return csr_part_ms(strip.first_row + strip.rows) - csr_part_ms(strip.first_row);
          },
      .ell_part_ms = [&](const SortedRowsPart& below) { return ms_of(ell_parts_below.ms(below)); }};
  const StripPartition p = strip_partition(
      distribution_of(f), costs,
      {.strip_rows = CudaStripRules::strip_rows(device, threads_per_row, kStripDefaultBlockSize),
       .min_gain_fraction = 0.0});
  if (!predicted) return std::nullopt;
  return p;
}

// The block size of a part whose predicted time is least (kStripDefaultBlockSize on a tie).
std::uint32_t fastest_block(const PartTimePredictor& predictor, const auto& block_sizes,
                            const auto& part_at_block) {
  std::uint32_t best = kStripDefaultBlockSize;
  double best_ms = or_infinity(predictor.part_ms(part_at_block(best)));
  for (const std::uint32_t block : block_sizes) {
    const double ms = or_infinity(predictor.part_ms(part_at_block(block)));
    if (ms < best_ms) {
      best_ms = ms;
      best = block;
    }
  }
  return best;
}

}  // namespace

SortedRowRange sorted_row_range(const MatrixFeatures& features, std::int64_t first_row,
                                std::int64_t rows) {
  if (first_row < 0 || rows < 0 || first_row + rows > features.rows)
    throw_invalid("sorted_row_range: rows [" + std::to_string(first_row) + ", " +
                  std::to_string(first_row + rows) + ") are not inside the matrix's " +
                  std::to_string(features.rows));
  std::int64_t counted = 0;
  for (const RowLengthCount& c : features.distribution) counted += c.rows;
  if (counted + features.empty_rows != features.rows)
    throw_invalid("sorted_row_range: the DF holds " + std::to_string(counted) +
                  " non-empty rows and " + std::to_string(features.empty_rows) +
                  " empty ones, the matrix " + std::to_string(features.rows));
  SortedRowRange range;
  const std::int64_t end = first_row + rows;
  std::int64_t set_first = 0;  // sorted position of the first row of the set
  // Longest first: the sets from the back, then the empty rows (which add no set).
  for (auto set = features.distribution.rbegin(); set != features.distribution.rend(); ++set) {
    const std::int64_t lo = std::max(first_row, set_first);
    const std::int64_t hi = std::min(end, set_first + set->rows);
    if (lo < hi) {
      if (range.distribution.empty()) range.width = set->length;
      range.distribution.push_back({set->length, hi - lo});
      range.nnz += (hi - lo) * set->length;
    }
    set_first += set->rows;
  }
  range.empty_rows = std::max<std::int64_t>(0, end - std::max(first_row, set_first));
  std::reverse(range.distribution.begin(), range.distribution.end());
  return range;
}

std::int64_t block_per_row_min_length(std::int64_t nnz, const DeviceInfo& device,
                                      std::uint32_t block_size) {
  if (nnz < 0) throw_invalid("block_per_row_min_length: nnz " + std::to_string(nnz) + " < 0");
  const std::int64_t resident_warps = CudaStripRules::strip_rows(device, 32, block_size);
  const std::int64_t even_share = (nnz + resident_warps - 1) / resident_warps;
  return std::max<std::int64_t>(block_size, even_share);
}

std::vector<RowLengthCount> block_row_warp_shares(std::int64_t length, std::uint32_t block_size) {
  if (length < 0 || block_size == 0 || block_size % 32 != 0)
    throw_invalid("block_row_warp_shares: length " + std::to_string(length) + ", block size " +
                  std::to_string(block_size) + " (a positive multiple of 32)");
  const std::int64_t block = block_size;
  const std::int64_t rounds = length / block;  // full rounds: 32 entries each warp
  const std::int64_t rest = length % block;    // the last round's entries, from warp 0
  // The shares shrink from warp 0 on, so equal ones are neighbours: counted as they come (no
  // map; the strip's parts ask for every block row's length), then turned ascending.
  std::vector<RowLengthCount> out;
  for (std::int64_t warp = 0; warp < block / 32; ++warp) {
    const std::int64_t share =
        rounds * 32 + std::clamp<std::int64_t>(rest - warp * 32, 0, 32);
    if (share <= 0) continue;
    if (!out.empty() && out.back().length == share)
      ++out.back().rows;
    else
      out.push_back({share, 1});
  }
  std::reverse(out.begin(), out.end());
  return out;
}

std::int64_t CudaStripRules::strip_rows(const DeviceInfo& device, std::uint32_t threads_per_row,
                                        std::uint32_t block_size) {
  const Occupancy occupancy =
      compute_occupancy({.threads_per_block = static_cast<int>(block_size),
                         .registers_per_thread = kStripCsrRegistersPerThread,
                         .static_shared_bytes = 0,
                         .dynamic_shared_bytes = 0},
                        device);
  return strip_rows_from_occupancy(occupancy, device, static_cast<int>(threads_per_row));
}

void CudaStripRules::check_candidate(const Candidate& candidate, const MatrixFeatures& features,
                                     const DeviceInfo& device) {
  if (candidate.format != kCudaStripFormatId)
    throw_invalid("cuda_strip: candidate of format id " + std::to_string(candidate.format.value));
  if (candidate.launch != LaunchConfig{})
    throw_invalid("cuda_strip: launch {" + to_string(candidate.launch) +
                  "} must be empty (the parts' launches are its params)");
  const CudaStripParams p = params_of(candidate);
  if (p.variant > static_cast<std::uint32_t>(StripVariant::hopper))
    throw_invalid("cuda_strip: variant " + std::to_string(p.variant) +
                  " is neither 0 (paper) nor 1 (hopper)");
  if (!compiled_width(p.csr_threads_per_row))
    throw_invalid("cuda_strip: csr_threads_per_row " + std::to_string(p.csr_threads_per_row) +
                  " is not a compiled width (2, 4, 8, 16, 32)");
  if (p.variant == static_cast<std::uint32_t>(StripVariant::paper) && p.csr_threads_per_row != 32)
    throw_invalid("cuda_strip: the paper variant runs one warp per row, not " +
                  std::to_string(p.csr_threads_per_row) + " threads per row");
  if (!one_of(kCsrVectorBlockSizes, p.csr_block_size))
    throw_invalid("cuda_strip: csr_block_size " + std::to_string(p.csr_block_size) +
                  " is not one of 128, 256, 512");
  if (!one_of(kEllBlockSizes, p.ell_block_size))
    throw_invalid("cuda_strip: ell_block_size " + std::to_string(p.ell_block_size) +
                  " is not one of 128, 256, 512");
  if (p.separator <= 0 || p.separator >= features.rows)
    throw_invalid("cuda_strip: separator " + std::to_string(p.separator) +
                  " is not strictly inside the matrix's " + std::to_string(features.rows) +
                  " rows (no partition is cuda_ell or cuda_csr_vector)");
  if (p.block_rows < 0 || p.block_rows > p.separator)
    throw_invalid("cuda_strip: block_rows " + std::to_string(p.block_rows) +
                  " is not inside [0, separator " + std::to_string(p.separator) + "]");
  if (p.variant == static_cast<std::uint32_t>(StripVariant::paper) && p.block_rows != 0)
    throw_invalid("cuda_strip: the paper variant runs every CSR row on a warp, not " +
                  std::to_string(p.block_rows) + " rows a block each");
  const std::int64_t strip = strip_rows(device, p.csr_threads_per_row, p.csr_block_size);
  if ((p.separator - p.block_rows) % strip != 0)
    throw_invalid("cuda_strip: separator " + std::to_string(p.separator) +
                  (p.block_rows == 0 ? std::string()
                                     : " less block_rows " + std::to_string(p.block_rows)) +
                  " is not a whole number of strips of " +
                  std::to_string(strip) + " rows (" +
                  std::to_string(p.csr_threads_per_row) + " threads per row, blocks of " +
                  std::to_string(p.csr_block_size) + ")");
}

bool CudaStripRules::is_valid(const Candidate& candidate, const MatrixFeatures& features,
                              const DeviceInfo& device) const {
  try {
    check_candidate(candidate, features, device);
    return true;
  } catch (const Error&) {
    return false;
  }
}

bool CudaStripRules::admissible(const MatrixFeatures& features, const DeviceInfo& device,
                                Precision precision, std::uint64_t memory_budget_bytes) const {
  // No candidate fits where there is none.
  if (!device.is_gpu) return false;
  return some_candidate_fits(*this, features, device, precision, memory_budget_bytes);
}

std::vector<Candidate> CudaStripRules::candidates(const MatrixFeatures& features,
                                                  const DeviceInfo& device) const {
  // Without a model, paper 004 Sec. 1's rule of thumb (CSR vector for rows of many non-zeros,
  // ELL for short, near-equal rows) placed at strips:
  //  - below the rows of the longest length, rounded up to a strip: the least move to CSR
  //    vector that narrows the ELL part. On a power-law matrix that is the first strip, which
  //    holds the few long rows that would leave ELL's one thread per row walking thousands of
  //    entries (and pad every row to them).
  //  - where the rows drop below a warp's length, rounded up to a strip: above, each row keeps
  //    all 32 lanes of a warp busy (the paper's one warp per row); below, one thread walks
  //    fewer than 32 entries, and sorted rows keep a warp's threads on near-equal lengths.
  // The hopper variant runs the rows longer than block_per_row_min_length a block each (the
  // critical path a warp's walk of them would be), takes each separator's warp rows at the
  // widest lane count not above their mean length, and rounds them up to that width's
  // (larger) strip; where there are block rows it also offers the separator right below
  // them (a few very long rows among short ones, circuit-like: the rest is one ELL part).
  if (!may_partition(features, device)) return {};
  std::vector<Candidate> out;
  const std::int64_t warp_strip = strip_rows(device, 32, kStripDefaultBlockSize);
  for (const std::int64_t s : model_free_separators(features, device, warp_strip))
    out.push_back(strip_candidate(StripVariant::paper, s, 32, kStripDefaultBlockSize,
                                  kStripDefaultBlockSize));
  const std::int64_t block_rows = model_free_block_rows(features, device);
  if (block_rows > 0 && offered_separator(features, block_rows))
    out.push_back(strip_candidate(StripVariant::hopper, block_rows, 32, kStripDefaultBlockSize,
                                  kStripDefaultBlockSize, block_rows));
  for (const std::int64_t s : model_free_separators(features, device, warp_strip)) {
    if (s <= block_rows) continue;
    const SortedRowRange warp_rows = sorted_row_range(features, block_rows, s - block_rows);
    const std::uint32_t width =
        width_for_mean(static_cast<double>(warp_rows.nnz) / static_cast<double>(s - block_rows));
    if (width == 32 && block_rows == 0) continue;  // the paper variant's candidate
    const std::int64_t separator =
        block_rows + round_up(s - block_rows, strip_rows(device, width, kStripDefaultBlockSize));
    if (!offered_separator(features, separator)) continue;
    const Candidate c = strip_candidate(StripVariant::hopper, separator, width,
                                        kStripDefaultBlockSize, kStripDefaultBlockSize,
                                        block_rows);
    if (std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
  }
  return out;
}

std::vector<Candidate> CudaStripRules::candidates_chosen_by(const PartTimePredictor& predictor,
                                                            const MatrixFeatures& features,
                                                            const DeviceInfo& device) const {
  if (!may_partition(features, device)) return {};
  const std::vector<Candidate> model_free = candidates(features, device);
  std::vector<Candidate> out;
  // Both variants sweep a warp per row: each width is swept once (the sweeps are most of the
  // choice's cost, bench/ranking-timing).
  EllPartsBelow ell_parts_below(predictor, features, device);
  std::map<std::uint32_t, std::optional<StripPartition>> sweeps;
  const auto sweep_at = [&](std::uint32_t width) -> const std::optional<StripPartition>& {
    auto known = sweeps.find(width);
    if (known == sweeps.end())
      known = sweeps.emplace(width, sweep(predictor, features, device, width, ell_parts_below))
                  .first;
    return known->second;
  };
  for (const StripVariant variant : {StripVariant::paper, StripVariant::hopper}) {
    // The paper sweeps one warp per row; the hopper variant sweeps every compiled width and
    // keeps the one whose best split is predicted least.
    std::optional<StripPartition> best;
    std::uint32_t best_width = 32;
    bool predicted = true;
    for (const std::uint32_t width : kCsrVectorThreadsPerRow) {
      if (variant == StripVariant::paper && width != 32) continue;
      const std::optional<StripPartition>& p = sweep_at(width);
      if (!p) {
        predicted = false;
        break;
      }
      if (p->splits() && (!best || p->total_ms < best->total_ms)) {
        best = *p;
        best_width = width;
      }
    }
    if (!predicted) {  // a part's format is not calibrated: this variant's model-free choice
      for (const Candidate& c : model_free)
        if (params_of(c).variant == static_cast<std::uint32_t>(variant)) out.push_back(c);
      continue;
    }
    if (!best) continue;  // no partition: a single format wins outright
    const std::int64_t separator = best->separator_row;
    const SortedRowRange above = sorted_row_range(features, 0, separator);
    const SortedRowRange below = sorted_row_range(features, separator, features.rows - separator);
    const std::uint32_t csr_block =
        fastest_block(predictor, kCsrVectorBlockSizes, [&](std::uint32_t block) {
          return gpu_part(features, above,
                          csr_part_candidate(separator, best_width, block, device));
        });
    const std::uint32_t ell_block =
        fastest_block(predictor, kEllBlockSizes, [&](std::uint32_t block) {
          return gpu_part(features, below,
                          ell_part_candidate(features.rows - separator, below.width, block, device));
        });
    // The strip (and so the separator) was swept at the default block size; a CSR block size
    // whose occupancy gives another strip keeps the default.
    const std::uint32_t block =
        separator % strip_rows(device, best_width, csr_block) == 0 ? csr_block
                                                                   : kStripDefaultBlockSize;
    const Candidate chosen = strip_candidate(variant, separator, best_width, block, ell_block);
    // A hopper choice of a warp per row at the paper's separator is the paper's candidate.
    if (variant == StripVariant::hopper && best_width == 32 &&
        std::find(out.begin(), out.end(),
                  strip_candidate(StripVariant::paper, separator, 32, block, ell_block)) !=
            out.end())
      continue;
    out.push_back(chosen);
  }
  // The sweep runs every CSR row on lanes of a warp. A model-free hopper candidate with block
  // rows joins where its parts (parts() carries the block rows' critical path: their longest
  // warp share) are predicted less than every candidate chosen so far (or none was).
  const auto predicted_ms = [&](const Candidate& c) {
    double ms = 0.0;
    for (const FormatPart& part : parts(features, c)) ms += or_infinity(predictor.part_ms(part));
    return ms;
  };
  double least_ms = std::numeric_limits<double>::infinity();
  for (const Candidate& c : out) least_ms = std::min(least_ms, predicted_ms(c));
  for (const Candidate& c : model_free)
    if (params_of(c).block_rows > 0 && std::find(out.begin(), out.end(), c) == out.end() &&
        predicted_ms(c) < least_ms)
      out.push_back(c);
  return out;
}

std::uint64_t CudaStripRules::device_bytes(const MatrixFeatures& features, Precision precision,
                                           const Candidate& candidate) const {
  const CudaStripParams p = params_of(candidate);
  const std::int64_t separator = std::clamp<std::int64_t>(p.separator, 0, features.rows);
  const SortedRowRange above = sorted_row_range(features, 0, separator);
  const SortedRowRange below = sorted_row_range(features, separator, features.rows - separator);
  const std::uint64_t entry_bytes = sizeof(ColIndex) + value_bytes(precision);
  const auto rows = static_cast<std::uint64_t>(features.rows);
  const auto rows_below = static_cast<std::uint64_t>(features.rows - separator);
  return rows * sizeof(std::int32_t) +                                       // permutation
         (static_cast<std::uint64_t>(separator) + 1) * sizeof(RowOffset) +  // CSR offsets
         static_cast<std::uint64_t>(above.nnz) * entry_bytes +               // CSR entries
         rows_below * static_cast<std::uint64_t>(below.width) * entry_bytes +  // ELL slots
         rows_below * sizeof(std::int32_t);                                  // ELL row lengths
}

std::vector<FormatPart> CudaStripRules::parts(const MatrixFeatures& features,
                                              const Candidate& candidate) const {
  const CudaStripParams p = params_of(candidate);
  if (p.separator <= 0 || p.separator >= features.rows)
    throw_invalid("cuda_strip: separator " + std::to_string(p.separator) +
                  " is not strictly inside the matrix's " + std::to_string(features.rows) +
                  " rows");
  // build() sizes the grids to the device's resident blocks, which parts() is not given; the
  // csr_vector and ell families read rows, lanes and block size, not the grid, so the parts
  // carry the grid of a device whose resident limit is unknown (every row's block).
  if (p.block_rows < 0 || p.block_rows > p.separator)
    throw_invalid("cuda_strip: block_rows " + std::to_string(p.block_rows) +
                  " is not inside [0, separator " + std::to_string(p.separator) + "]");
  const DeviceInfo unknown_device{};
  std::vector<FormatPart> out;
  // Block rows first, then warp rows, then ELL: the order apply() launches them.
  if (p.block_rows > 0)
    out.push_back(block_rows_part(features, p.block_rows, p.csr_block_size, unknown_device));
  if (p.separator > p.block_rows) {
    const SortedRowRange warp_rows =
        sorted_row_range(features, p.block_rows, p.separator - p.block_rows);
    out.push_back(gpu_part(features, warp_rows,
                           csr_part_candidate(p.separator - p.block_rows, p.csr_threads_per_row,
                                              p.csr_block_size, unknown_device)));
  }
  const SortedRowRange below =
      sorted_row_range(features, p.separator, features.rows - p.separator);
  out.push_back(gpu_part(features, below,
                         ell_part_candidate(features.rows - p.separator, warp_walked_width(below),
                                            p.ell_block_size, unknown_device)));
  return out;
}

}  // namespace spmvd
