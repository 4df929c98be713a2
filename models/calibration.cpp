#include "models/calibration.hpp"

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <utility>

#include <tbb/parallel_for.h>

#include "core/error.hpp"
#include "core/structure_features.hpp"
#include "kernels/formats/cpu_coo/cpu_coo_rules.hpp"
#include "kernels/formats/cpu_csr/cpu_csr_rules.hpp"
#include "kernels/formats/cuda_coo/cuda_coo_rules.hpp"
#include "kernels/formats/cuda_csr_scalar/cuda_csr_scalar_rules.hpp"
#include "kernels/formats/cuda_csr_vector/cuda_csr_vector_rules.hpp"
#include "kernels/formats/cuda_ell/cuda_ell_rules.hpp"
#include "kernels/formats/cuda_sell/cuda_sell_rules.hpp"
#include "kernels/formats/cusparse_bsr/cusparse_bsr_features.hpp"
#include "kernels/formats/cusparse_bsr/cusparse_bsr_rules.hpp"
#include "kernels/formats/cusparse_coo/cusparse_coo_rules.hpp"
#include "kernels/formats/cusparse_csr/cusparse_csr_rules.hpp"
#include "kernels/formats/cusparse_sell/cusparse_sell_rules.hpp"
#include "models/families/bytes/bytes_model.hpp"
#include "models/cache_resident.hpp"
#include "models/families/csr_vector/csr_vector_model.hpp"
#include "models/fitting.hpp"
#include "models/model_predictor.hpp"
#include "models/occupancy.hpp"

namespace spmvd {

std::int64_t bsr_sample_block_dim(const FormatParams& params) {
  if (params.empty()) return kBsrDefaultSampleBlockDim;
  const std::uint32_t b = params.as<CusparseBsrParams>("cusparse_bsr").block_dim;
  return b > 0 ? static_cast<std::int64_t>(b) : kBsrDefaultSampleBlockDim;
}

std::string_view to_string(CalibrationStage stage) noexcept {
  switch (stage) {
    case CalibrationStage::csr_vector:
      return "csr_vector";
    case CalibrationStage::ell:
      return "ell";
    case CalibrationStage::coo:
      return "coo";
    case CalibrationStage::bytes:
      return "bytes";
    case CalibrationStage::latency:
      return "latency";
    case CalibrationStage::format_bytes:
      return "format_bytes";
    case CalibrationStage::cache_resident:
      return "cache_resident";
  }
  return "unknown";
}

bool has_format_bytes_stage(const FormatRules& rules) noexcept {
  return rules.model_family() == kBytesFamily;
}

namespace {

// latency runs before csr_vector: its fixed cost per lane count scales the csr_vector samples
// to one row count (csr_sample_at_rows), and its records complete those calibrations.
// cache_resident runs last: it compares with predictions of the finished set.
constexpr CalibrationStage kStages[] = {CalibrationStage::latency, CalibrationStage::csr_vector,
                                        CalibrationStage::ell,     CalibrationStage::coo,
                                        CalibrationStage::bytes,   CalibrationStage::format_bytes,
                                        CalibrationStage::cache_resident};

// What the latency stage measured for one threads_per_row (plan_latency), for the csr_vector
// calibrations of those lanes.
struct LaneLatency {
  double fixed_ms = 0.0;
  double long_row_step_ms = 0.0;
  double long_row_step_beyond_l2_ms = 0.0;
};

// The block size of the latency samples: a latency does not depend on it.
constexpr std::uint32_t kLatencyBlockSize = 256;

// The ELL grid's row axis starts here: below a few thousand rows every shape costs one launch.
constexpr std::int64_t kEllMinRows = 4096;

// splitmix64 (Steele, Lea, Flood, "Fast splittable pseudorandom number generators", 2014):
// calibration draws hundreds of millions of numbers, and this is several times faster than
// std::mt19937_64 with statistics that are ample for choosing columns.
struct SplitMix64 {
  std::uint64_t state;
  std::uint64_t next() noexcept {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  double unit() noexcept { return static_cast<double>(next() >> 11) * 0x1.0p-53; }  // [0, 1)
};

std::int64_t resolve_max_sample_nnz(const CalibrationOptions& options, const DeviceInfo& device) {
  if (options.max_sample_nnz > 0) return options.max_sample_nnz;
  // A fp64 CSR non-zero is 12 bytes (value + 32-bit column index).
  const auto four_l2 = static_cast<std::int64_t>(4 * device.l2_bytes / 12);
  return std::clamp<std::int64_t>(four_l2, std::int64_t{1} << 16, std::int64_t{1} << 25);
}

void validate_options(const CalibrationOptions& o) {
  const auto fail = [](const std::string& what) { throw_invalid("calibration options: " + what); };
  if (o.warmup_runs < 0) fail("warmup_runs " + std::to_string(o.warmup_runs) + " < 0");
  if (o.timed_runs < 1) fail("timed_runs " + std::to_string(o.timed_runs) + " < 1");
  if (o.size_steps < 2)
    fail("size_steps " + std::to_string(o.size_steps) + " < 2 (a line needs two sizes)");
  if (o.coo_row_length < 1) fail("coo_row_length must be positive");
  if (o.cache_resident_rows.size() < 2 || o.cache_resident_row_lengths.size() < 2)
    fail("the cache_resident grid needs >= 2 row counts and >= 2 row lengths");
  for (const std::int64_t rows : o.cache_resident_rows)
    for (const std::int64_t length : o.cache_resident_row_lengths)
      if (length < 1 || length > rows)
        fail("cache_resident sample of " + std::to_string(rows) + " rows of " +
             std::to_string(length) + " is not a matrix of full rows");
  if (o.coo_entries_per_thread.empty() ||
      std::any_of(o.coo_entries_per_thread.begin(), o.coo_entries_per_thread.end(),
                  [](std::uint32_t e) { return e < 1; }))
    fail("coo_entries_per_thread must hold positive values");
  if (o.csr_block_sizes.empty() || o.ell_block_sizes.empty() || o.coo_block_sizes.empty())
    fail("block size lists must not be empty");
  for (const std::int64_t c : o.csr_row_lengths)
    if (c < 1) fail("csr_row_lengths holds " + std::to_string(c));
  for (const std::int64_t w : o.ell_widths)
    if (w < 1) fail("ell_widths holds " + std::to_string(w));
  if (o.ell_widths.empty()) fail("ell_widths must not be empty");
}

// The doubling sizes of the COO and bytes samples.
std::vector<SampleShape> doubling_shapes(std::int64_t max_nnz, const CalibrationOptions& o) {
  std::vector<SampleShape> shapes;
  for (int k = o.size_steps - 1; k >= 0; --k) {
    const std::int64_t nnz = std::max<std::int64_t>(max_nnz >> k, 1);
    const std::int64_t rows = std::max<std::int64_t>(nnz / o.coo_row_length, 1);
    const SampleShape shape{.rows = rows, .row_length = std::min(o.coo_row_length, rows)};
    if (shapes.empty() || shapes.back() != shape) shapes.push_back(shape);
  }
  return shapes;
}

// Appends the banded twin of every random sample (of `rows` rows, where given) whose row length
// is in `lengths` (every one of those rows where `lengths` is empty).
void add_banded_twins(PlannedVariant& v, std::span<const std::int64_t> lengths,
                      std::optional<std::int64_t> rows) {
  std::vector<SampleShape> twins;
  for (const SampleShape& s : v.samples) {
    if ((rows && s.rows != *rows) || s.long_row || s.banded) continue;
    if (!lengths.empty() && std::find(lengths.begin(), lengths.end(), s.row_length) == lengths.end())
      continue;
    SampleShape twin = s;
    twin.banded = true;
    twins.push_back(twin);
  }
  v.samples.insert(v.samples.end(), twins.begin(), twins.end());
}

KernelResources resources_or_assumed(const std::optional<KernelResources>& measured,
                                     std::uint32_t block_size) {
  if (measured) return *measured;
  return KernelResources{.threads_per_block = static_cast<int>(block_size),
                         .registers_per_thread = kAssumedRegistersPerThread,
                         .static_shared_bytes = 0,
                         .dynamic_shared_bytes = 0};
}

// A variant of one of our kernels launched with `block` threads per block and `lanes` per row;
// `measured`: its registers read from the compiled kernel, else the documented assumption.
PlannedVariant launched_variant(CalibrationStage stage, FormatId format,
                                const std::optional<KernelResources>& measured,
                                std::uint32_t block, int lanes) {
  PlannedVariant v;
  v.stage = stage;
  v.format = format;
  v.kernel = {.resources = resources_or_assumed(measured, block), .threads_per_row = lanes};
  v.kernel.resources.threads_per_block = static_cast<int>(block);
  v.registers_measured = measured.has_value();
  return v;
}

// The features of a uniform sample of this shape, from the shape alone (no block counts: the
// rules then judge BSR's fill by its bounds).
MatrixFeatures shape_features(const SampleShape& shape) {
  MatrixFeatures f;
  f.rows = f.cols = shape.rows;
  f.nnz = shape.nnz();
  f.row_length_min = f.row_length_max = shape.row_length;
  f.row_length_mean = static_cast<double>(shape.row_length);
  if (shape.row_length > 0) f.distribution = {{.length = shape.row_length, .rows = shape.rows}};
  return f;
}

// The paper's samples are "very large sparse matrices"; on Hopper a sample of short rows at the
// base row count is smaller than L2 and, timed again and again, runs from it (fp64 scalar
// kernel on an H100: c = 12 took 0.041 ms, c = 16, one third more non-zeros, 0.097 ms). Such a
// sample grows to a footprint of kStreamingFootprintInL2s L2s, so that every sample streams
// from DRAM as a large matrix does; the cache_resident stage corrects matrices that fit. The
// fit sees each sample scaled back to the base row count (csr_sample_at_rows). Grown samples
// have a multiple of kStreamingRowsQuantum rows, the same for every variant, so that one
// generated matrix serves them all (whole strips per variant: 542 M non-zeros generated for the
// H100's fp32 csr_vector stage; this: 270 M); a partial last wave is a few percent of a sample
// of several waves.
constexpr double kStreamingFootprintInL2s = 1.5;
constexpr std::int64_t kStreamingRowsQuantum = std::int64_t{1} << 16;

std::int64_t streaming_rows(std::int64_t base_rows, std::int64_t row_length,
                            const DeviceInfo& device, Precision precision) {
  if (device.l2_bytes == 0) return base_rows;
  const auto footprint = [&](std::int64_t rows) {
    const MatrixFeatures f = shape_features({.rows = rows, .row_length = row_length});
    return footprint_bytes(f, csr_storage_bytes_estimate(f, precision), precision);
  };
  const double wanted = kStreamingFootprintInL2s * static_cast<double>(device.l2_bytes);
  if (footprint(base_rows) >= wanted) return base_rows;
  std::int64_t rows = kStreamingRowsQuantum;
  while (footprint(rows) < wanted) rows += kStreamingRowsQuantum;
  return std::max(rows, base_rows);
}

void plan_csr_vector(const FormatRegistry& registry, const DeviceInfo& device, Precision precision,
                     const CalibrationOptions& o, std::int64_t max_nnz,
                     const KernelResourcesFn& kernel_resources, CalibrationPlan& plan) {
  std::vector<std::pair<FormatId, std::uint32_t>> lanes;  // (format, threads_per_row)
  if (registry.find(kCudaCsrScalarFormatId)) lanes.emplace_back(kCudaCsrScalarFormatId, 1);
  if (registry.find(kCudaCsrVectorFormatId))
    for (const std::uint32_t t : kCsrVectorThreadsPerRow)
      lanes.emplace_back(kCudaCsrVectorFormatId, t);

  for (const auto& [format, tpr] : lanes) {
    for (const std::uint32_t block : o.csr_block_sizes) {
      if (block % tpr != 0) continue;  // a row group never straddles blocks
      std::optional<KernelResources> measured;
      if (tpr > 1 && kernel_resources)  // the scalar kernel is not in a header (see .hpp)
        measured = kernel_resources(CompiledKernel::csr_vector, precision, static_cast<int>(tpr),
                                    static_cast<int>(block));
      PlannedVariant v = launched_variant(CalibrationStage::csr_vector, format, measured, block,
                                          static_cast<int>(tpr));
      const Occupancy occupancy = compute_occupancy(v.kernel.resources, device);
      if (occupancy.active_blocks_per_sm == 0) continue;  // cannot launch: no candidate either
      // Sec. 4.3.1: one strip is what one wave of resident blocks covers.
      v.rows_per_strip = static_cast<std::int64_t>(device.sm_count) *
                         occupancy.active_blocks_per_sm * (block / tpr);
      std::vector<std::int64_t> lengths;
      const std::int64_t longest = std::max<std::int64_t>(64, 4 * std::int64_t{tpr});
      for (const std::int64_t c : o.csr_row_lengths)
        if (c <= longest) lengths.push_back(c);
      std::sort(lengths.begin(), lengths.end());
      lengths.erase(std::unique(lengths.begin(), lengths.end()), lengths.end());
      // The piecewise fit needs 3 lengths for the conic and 2 for the line.
      if (lengths.size() < 5)
        throw_invalid("calibration options: csr_row_lengths leaves " +
                      std::to_string(lengths.size()) + " lengths <= " + std::to_string(longest) +
                      " for threads_per_row " + std::to_string(tpr) + "; the fit needs 5");
      // Enough strips that the longest-row sample holds about max_nnz non-zeros.
      v.sample_strips = std::max<std::int64_t>(1, max_nnz / (v.rows_per_strip * lengths.back()));
      const std::int64_t rows = v.sample_strips * v.rows_per_strip;
      for (const std::int64_t c : lengths)
        if (c <= rows)
          v.samples.push_back({.rows = streaming_rows(rows, c, device, precision),
                               .row_length = c});
      add_banded_twins(v, kBandedCsrRowLengths, std::nullopt);
      plan.variants.push_back(std::move(v));
    }
  }
}

void plan_ell(const FormatRegistry& registry, Precision precision, const CalibrationOptions& o,
              std::int64_t max_nnz, const KernelResourcesFn& kernel_resources,
              CalibrationPlan& plan) {
  if (!registry.find(kCudaEllFormatId)) return;
  // Rows 4096, x4, ... up to where width 16 holds max_nnz (width 32 holds 2x that), so the top
  // of the grid streams from DRAM; the ELL model scales beyond the grid (ell_model.cpp).
  const std::int64_t rows_max = std::max<std::int64_t>(
      kEllMinRows, static_cast<std::int64_t>(std::bit_floor(
                       static_cast<std::uint64_t>(std::max<std::int64_t>(max_nnz / 16, 1)))));
  std::vector<std::int64_t> rows_axis;
  for (std::int64_t r = kEllMinRows; r <= rows_max; r *= 4) rows_axis.push_back(r);
  if (rows_axis.back() != rows_max) rows_axis.push_back(rows_max);
  std::vector<std::int64_t> widths = o.ell_widths;
  std::sort(widths.begin(), widths.end());
  widths.erase(std::unique(widths.begin(), widths.end()), widths.end());

  for (const std::uint32_t block : o.ell_block_sizes) {
    const auto measured = kernel_resources ? kernel_resources(CompiledKernel::ell, precision, 1,
                                                              static_cast<int>(block))
                                           : std::nullopt;
    PlannedVariant v =
        launched_variant(CalibrationStage::ell, kCudaEllFormatId, measured, block, 1);
    for (const std::int64_t rows : rows_axis)
      for (const std::int64_t w : widths) v.samples.push_back({.rows = rows, .row_length = w});
    // The banded ratio is a property of the gathers, not of the block size: on an H100 the
    // ratios of block sizes 128, 256 and 512 agreed within 3 % at every width, and the twins
    // at the most rows are the stage's biggest samples after the widest random ones. Timed on the first
    // block size; the fit gives its grid to the others (share_ell_banded_ratio).
    if (block == o.ell_block_sizes.front()) add_banded_twins(v, kBandedEllWidths, std::nullopt);
    plan.variants.push_back(std::move(v));
  }
}

void plan_coo(const FormatRegistry& registry, const DeviceInfo& device, Precision precision,
              const CalibrationOptions& o, std::int64_t max_nnz,
              const KernelResourcesFn& kernel_resources, CalibrationPlan& plan) {
  const std::vector<SampleShape> shapes = doubling_shapes(max_nnz, o);
  if (device.is_gpu) {
    if (!registry.find(kCudaCooFormatId)) return;
    for (const std::uint32_t entries : o.coo_entries_per_thread)
      for (const std::uint32_t block : o.coo_block_sizes) {
        const auto measured = kernel_resources ? kernel_resources(CompiledKernel::coo, precision,
                                                                  1, static_cast<int>(block))
                                               : std::nullopt;
        PlannedVariant v =
            launched_variant(CalibrationStage::coo, kCudaCooFormatId, measured, block, 1);
        v.entries_per_thread = entries;
        v.samples = shapes;
        add_banded_twins(v, {}, shapes.back().rows);
        plan.variants.push_back(std::move(v));
      }
  } else if (registry.find(kCpuCooFormatId)) {
    // oneTBB picks the ranges: no launch to record, block size 0 matches any candidate.
    PlannedVariant v;
    v.stage = CalibrationStage::coo;
    v.format = kCpuCooFormatId;
    v.kernel = {.resources = {}, .threads_per_row = 1};
    v.samples = shapes;
    add_banded_twins(v, {}, shapes.back().rows);
    plan.variants.push_back(std::move(v));
  }
}

void plan_bytes(const FormatRegistry& registry, const DeviceInfo& device,
                const CalibrationOptions& o, std::int64_t max_nnz, CalibrationPlan& plan) {
  // cuSPARSE CSR ALG1 is the baseline and streams close to the device's bandwidth: the right
  // stand-in for the library and other formats the bytes model covers.
  const FormatId format = device.is_gpu ? kCusparseCsrFormatId : kCpuCsrFormatId;
  if (!registry.find(format)) return;
  PlannedVariant v;
  v.stage = CalibrationStage::bytes;
  v.format = format;
  v.kernel = {.resources = {}, .threads_per_row = 0};
  v.samples = doubling_shapes(max_nnz, o);
  plan.variants.push_back(std::move(v));
}

// The distinct parameters of the format's first candidates on such a sample, at most
// kFormatBytesVariants of them.
std::vector<FormatParams> format_bytes_params(const FormatRules& rules, const SampleShape& shape,
                                              const DeviceInfo& device) {
  std::vector<FormatParams> out;
  for (const Candidate& c : rules.candidates(shape_features(shape), device)) {
    if (out.size() == kFormatBytesVariants) break;
    if (std::find(out.begin(), out.end(), c.params) == out.end()) out.push_back(c.params);
  }
  return out;
}

// A random sample of the bytes stages: nnz non-zeros in rows of coo_row_length. At
// max_sample_nnz, also the latency stage's beyond-L2 pair.
SampleShape bytes_shape(const CalibrationOptions& o, std::int64_t nnz) {
  const std::int64_t rows = std::max<std::int64_t>(nnz / o.coo_row_length, 1);
  return {.rows = rows, .row_length = std::min(o.coo_row_length, rows)};
}

// The samples a format_bytes record times after its sizes and their banded twins, in order.
enum class FormatBytesTail : std::size_t {
  in_l2_without_long_row,
  in_l2_with_long_row,
  largest_with_long_row,  // its twin without: the largest random size
  tiny,
  count
};

// BSR's samples after FormatBytesTail: the largest size again at each kBsrBlockRowLengths.
std::size_t block_row_sample_count(const PlannedVariant& v) noexcept {
  return v.stage == CalibrationStage::format_bytes && v.format == kCusparseBsrFormatId
             ? std::size(kBsrBlockRowLengths)
             : 0;
}

// Index of a format_bytes record's first FormatBytesTail sample.
std::size_t format_bytes_tail_start(const PlannedVariant& v) noexcept {
  return v.samples.size() - static_cast<std::size_t>(FormatBytesTail::count) -
         block_row_sample_count(v);
}

// One format_bytes record's samples: the two sizes random and banded (BSR: of dense blocks),
// then FormatBytesTail, then (BSR) the largest size at kBsrBlockRowLengths.
PlannedVariant format_bytes_variant(FormatId format, const FormatParams& params,
                                    std::span<const SampleShape> shapes) {
  PlannedVariant v;
  v.stage = CalibrationStage::format_bytes;
  v.format = format;
  v.kernel = {.resources = {}, .threads_per_row = 0};
  v.params = params;
  v.samples.assign(shapes.begin(), shapes.end());
  // BSR is a candidate only where blocks fill (CusparseBsrRules::may_fill_acceptably): its
  // bytes are fitted on matrices of dense blocks of its size, which it stores without fill.
  const bool bsr = format == kCusparseBsrFormatId;
  const std::int64_t b = bsr ? bsr_sample_block_dim(params) : 1;
  if (bsr) {
    for (SampleShape& s : v.samples) {
      s.block_dim = b;
      s.rows -= s.rows % b;
      s.row_length = std::max(s.row_length - s.row_length % b, b);
    }
  }
  const std::size_t sizes = v.samples.size();
  for (std::size_t i = 0; i < sizes; ++i) {
    SampleShape twin = v.samples[i];
    twin.banded = true;
    v.samples.push_back(twin);
  }
  // Last (FormatBytesTail): the format's critical path twice — the in-L2 pair, and the largest
  // random sample again with one long row (its twin without is that sample itself) — then the
  // tiny sample, for the format's own launch floor.
  v.samples.push_back({.rows = kInL2LongRowLength, .row_length = 1});
  v.samples.push_back(
      {.rows = kInL2LongRowLength, .row_length = 1, .long_row = kInL2LongRowLength});
  SampleShape beyond_l2 = v.samples[sizes - 1];
  beyond_l2.long_row = std::min(kLongRowLength, beyond_l2.rows);  // the CPU's samples are small
  v.samples.push_back(beyond_l2);
  v.samples.push_back({.rows = kLatencySampleRows, .row_length = 4});
  if (bsr) {
    const SampleShape& largest = v.samples[sizes - 1];
    const std::int64_t nnz = largest.rows * largest.row_length;
    for (const std::int64_t length : kBsrBlockRowLengths) {
      const std::int64_t rows = std::max(nnz / length / b, std::int64_t{1}) * b;
      v.samples.push_back({.rows = rows, .row_length = length, .block_dim = b});
    }
  }
  return v;
}

// Per-format bytes efficiency: two sizes a factor 4 apart (a line needs two), each random and
// banded. Few samples: the line is the same form as the bytes stage's, whose 8 sizes show it
// straight on the H200 from 2^21 non-zeros up.
void plan_format_bytes(const FormatRegistry& registry, const DeviceInfo& device,
                       const CalibrationOptions& o, std::int64_t max_nnz, CalibrationPlan& plan) {
  std::vector<SampleShape> shapes;
  for (const std::int64_t nnz : {std::max<std::int64_t>(max_nnz / 4, 1), max_nnz}) {
    const SampleShape shape = bytes_shape(o, nnz);
    if (shapes.empty() || shapes.back() != shape) shapes.push_back(shape);
  }
  for (const FormatEntry& entry : registry.entries()) {
    const FormatId format = entry.rules->id();
    if (!has_format_bytes_stage(*entry.rules) || entry.rules->needs_gpu() != device.is_gpu) continue;
    for (const FormatParams& params : format_bytes_params(*entry.rules, shapes.front(), device))
      plan.variants.push_back(format_bytes_variant(format, params, shapes));
  }
}

// One cache_resident variant per planned csr_vector, coo and format_bytes variant.
void plan_cache_resident(const CalibrationOptions& o, CalibrationPlan& plan) {
  std::vector<PlannedVariant> added;
  for (const PlannedVariant& base : plan.variants) {
    if (base.stage != CalibrationStage::csr_vector && base.stage != CalibrationStage::coo &&
        base.stage != CalibrationStage::format_bytes)
      continue;
    PlannedVariant v = base;
    v.stage = CalibrationStage::cache_resident;
    v.base_stage = base.stage;
    v.samples.clear();
    // BSR, as in format_bytes: dense blocks, so rows and lengths in whole blocks (lengths 2
    // and 4 both become 4: the grid takes each once).
    const std::int64_t b =
        base.format == kCusparseBsrFormatId ? bsr_sample_block_dim(base.params) : 1;
    const auto whole_blocks = [b](const std::vector<std::int64_t>& axis) {
      std::set<std::int64_t> out;
      for (const std::int64_t n : axis) out.insert((n + b - 1) / b * b);
      return out;
    };
    for (const std::int64_t rows : whole_blocks(o.cache_resident_rows))
      for (const std::int64_t length : whole_blocks(o.cache_resident_row_lengths))
        v.samples.push_back({.rows = rows, .row_length = length, .block_dim = b});
    // Every grid point again banded: the in-L2 banded ratio (models/cache_resident.hpp).
    add_banded_twins(v, {}, std::nullopt);
    added.push_back(std::move(v));
  }
  plan.variants.insert(plan.variants.end(), added.begin(), added.end());
}

// One latency variant per planned csr_vector variant of kLatencyBlockSize: the tiny sample,
// the in-L2 long-row pair, and the beyond-L2 pair (the largest random sample without and with
// a long row).
void plan_latency(const FormatRegistry& registry, const CalibrationOptions& o,
                  std::int64_t max_nnz, CalibrationPlan& plan) {
  const SampleShape largest = bytes_shape(o, max_nnz);
  SampleShape largest_with_long_row = largest;
  largest_with_long_row.long_row = std::min(kLongRowLength, largest.rows);
  std::vector<PlannedVariant> added;
  for (const PlannedVariant& csr : plan.variants) {
    if (csr.stage != CalibrationStage::csr_vector ||
        csr.kernel.resources.threads_per_block != static_cast<int>(kLatencyBlockSize) ||
        !registry.find(csr.format))
      continue;
    PlannedVariant v = csr;
    v.stage = CalibrationStage::latency;
    v.samples = {{.rows = kLatencySampleRows, .row_length = 4},
                 {.rows = kLongRowLength, .row_length = 1},
                 {.rows = kLongRowLength, .row_length = 1, .long_row = kLongRowLength},
                 largest,
                 largest_with_long_row};
    added.push_back(std::move(v));
  }
  plan.variants.insert(plan.variants.end(), added.begin(), added.end());
}

std::uint64_t shape_seed(std::uint64_t seed, const SampleShape& shape) {
  return seed ^ (static_cast<std::uint64_t>(shape.rows) * 0x9e3779b97f4a7c15ULL) ^
         (static_cast<std::uint64_t>(shape.row_length) << 40);
}

Candidate make_candidate(const PlannedVariant& v, const SampleShape& shape,
                         const MatrixFeatures& features, const FormatRegistry& registry,
                         const DeviceInfo& device) {
  const auto block = static_cast<std::uint32_t>(v.kernel.resources.threads_per_block);
  const auto tpr = static_cast<std::uint32_t>(v.kernel.threads_per_row);
  Candidate c{.format = v.format, .params = {}, .launch = {}};
  switch (v.stage == CalibrationStage::cache_resident ? v.base_stage : v.stage) {
    case CalibrationStage::csr_vector:
    case CalibrationStage::latency:
      // The launch the format's own rules produce: one wave of blocks, grid-stride beyond.
      c.launch = {.block_size = block,
                  .threads_per_row = tpr,
                  .grid_size = CudaCsrVectorRules::grid_size(shape.rows, tpr, block, device)};
      break;
    case CalibrationStage::ell:
      c.params = FieldSet::of(CudaEllParams{.ell_width = static_cast<std::uint32_t>(shape.row_length)});
      c.launch = {.block_size = block,
                  .threads_per_row = 1,
                  .grid_size = CudaCsrVectorRules::grid_size(shape.rows, 1, block, device)};
      break;
    case CalibrationStage::coo:
      if (v.format == kCudaCooFormatId)
        c.launch = {
            .block_size = block,
            .threads_per_row = 0,
            .grid_size = CudaCooRules::grid_size(shape.nnz(), block, v.entries_per_thread)};
      break;
    case CalibrationStage::bytes:
      if (v.format == kCusparseCsrFormatId)
        c.params = FieldSet::of(CusparseCsrParams{.library_algorithm = kCusparseSpmvCsrAlg1});
      break;
    case CalibrationStage::cache_resident:
      break;  // never a base stage
    case CalibrationStage::format_bytes: {
      // The candidate with the record's parameters, launched as the format's rules launch it
      // for this sample. Only blocked samples carry block counts (uniform_sample_features),
      // and those fill every BSR block size, so BSR's fill rule never drops it; on the
      // critical-path samples (one entry per row) the rules see unknown blocks and offer all.
      const FormatEntry* entry = registry.find(v.format);
      const std::vector<Candidate> own =
          entry ? entry->rules->candidates(features, device) : std::vector<Candidate>{};
      const auto same = std::find_if(own.begin(), own.end(),
                                     [&](const Candidate& o) { return o.params == v.params; });
      if (same == own.end())
        throw Error(ErrorCode::internal, "calibration: format_bytes " +
                                             std::string(entry ? entry->rules->name() : "?") +
                                             " offers no candidate with " + to_string(v.params) +
                                             " for a sample of " + std::to_string(shape.rows) +
                                             " rows");
      c = *same;
      break;
    }
  }
  return c;
}

// Samples faster than this get kShortSampleRuns timed applies instead of timed_runs.
constexpr double kShortSampleMs = 0.05;
constexpr std::size_t kShortSampleRuns = 101;

// Median of individually timed applies, y = A x (beta = 0, as spmv-bench times them).
double median_apply_ms(SpmvOperator& op, Device& device, const CsrMatrix<double>& sample,
                       Precision precision, const CalibrationOptions& o) {
  const std::size_t vb = value_bytes(precision);
  DeviceBuffer x(device, static_cast<std::size_t>(sample.cols) * vb);
  DeviceBuffer y(device, static_cast<std::size_t>(sample.rows) * vb);
  // Values do not change the time; bytes of 0x3F make every x finite and normal
  // (0.747 in fp32, 4.8e-4 in fp64), so no denormal slows a kernel down.
  device.fill_bytes(x.data(), 0x3F, x.bytes());
  device.fill_bytes(y.data(), 0, y.bytes());
  const auto run = [&] { op.apply(x.data(), y.data(), 1.0, 0.0); };
  for (int i = 0; i < o.warmup_runs; ++i) run();
  device.synchronize();
  std::vector<double> times(static_cast<std::size_t>(o.timed_runs));
  for (double& t : times) t = device.time_ms(run);
  const auto median = [&times] {
    std::nth_element(times.begin(), times.begin() + static_cast<std::ptrdiff_t>(times.size() / 2),
                     times.end());
    return times[times.size() / 2];
  };
  // A sample near the launch floor (a few us) decides the fixed costs that rank candidates on
  // cache-resident matrices, where 10 % is half a microsecond: time it kShortSampleRuns times
  // (the runs cost nothing next to generating and building the sample).
  if (median() < kShortSampleMs && times.size() < kShortSampleRuns) {
    times.resize(kShortSampleRuns);
    for (std::size_t i = static_cast<std::size_t>(o.timed_runs); i < times.size(); ++i)
      times[i] = device.time_ms(run);
  }
  return median();
}

// The host samples of the paper 003 CPU side beside a GPU: 4 doubling sizes up to 2^21
// non-zeros, a few ms each on a 16-core host (well under a second per precision).
constexpr int kHostCooSizes = 4;
constexpr std::int64_t kMaxHostCooSampleNnz = std::int64_t{1} << 21;

// Paper 003 Sec. 5.1 from measurements. Eq. 6 (CPU side): cpu_coo's time per non-zero on all
// nc hardware threads of the host, a line ms = a * nnz + b; with TC = 2 NNZ / (fc * nc) on
// those nc threads, fc = 2 / (a * nc) per core (Eq. 6 itself then runs the COO part on nc - 1,
// one core driving the GPU). On the CPU device the coo stage has timed exactly this (its only
// record is cpu_coo); beside a GPU the host is a second device, timed here and not planned,
// since every planned variant runs on `device`. Eq. 7 (GPU side): ell_ms_per_entry, the slope of
// the fastest ELL launch's ms against rows * width; Eq. 7 uses only the product C * F, and
// DeviceInfo counts SMs, not SPs, so C = sm_count and F is per SM: F = 1 / (slope * C). The
// paper's equations have no constant term, so both intercepts are dropped (the launch floor is
// ModelSet::launch_floor_ms). Without ELL samples (the CPU device) C and F stay 0, which
// gpu_ell_time_ms refuses. nullopt: no cpu_coo, or its slope is not positive (no rate).
std::optional<CpuGpuTimeCoefficients> fit_cpu_gpu(const FormatRegistry& registry, Device& device,
                                                  const CalibrationPlan& plan,
                                                  const CalibrationOptions& o,
                                                  const std::vector<CooCalibration>& coo,
                                                  std::optional<double> ell_ms_per_entry) {
  const FormatEntry* entry = registry.find(kCpuCooFormatId);
  if (entry == nullptr) return std::nullopt;
  double cpu_ms_per_nnz = 0.0;
  int cores = 0;
  if (!device.info().is_gpu) {
    if (coo.empty()) return std::nullopt;
    cpu_ms_per_nnz = coo.front().time_vs_nnz.slope;
    cores = device.info().sm_count;
  } else {
    const std::unique_ptr<Device> host = make_cpu_device();
    CalibrationOptions sizes = o;
    sizes.size_steps = kHostCooSizes;
    std::vector<SamplePoint> points;
    for (const SampleShape& shape :
         doubling_shapes(std::min(plan.max_sample_nnz, kMaxHostCooSampleNnz), sizes)) {
      const CsrMatrix<double> sample =
          uniform_row_length_sample(shape.rows, shape.row_length, shape_seed(o.seed, shape));
      auto op = entry->build(sample, plan.precision,
                             Candidate{.format = kCpuCooFormatId, .params = {}, .launch = {}},
                             *host);
      points.push_back({static_cast<double>(shape.nnz()),
                        median_apply_ms(*op, *host, sample, plan.precision, o)});
    }
    cpu_ms_per_nnz = fit_linear(points).slope;
    cores = host->info().sm_count;
  }
  if (cpu_ms_per_nnz <= 0.0 || cores <= 0) return std::nullopt;
  CpuGpuTimeCoefficients c;
  c.cpu_cores = cores;
  c.cpu_operations_per_ms = 2.0 / (cpu_ms_per_nnz * static_cast<double>(cores));
  if (ell_ms_per_entry && device.info().sm_count > 0) {
    c.gpu_streaming_processors = device.info().sm_count;
    c.gpu_operations_per_ms_per_sp =
        1.0 / (*ell_ms_per_entry * static_cast<double>(device.info().sm_count));
  }
  return c;
}

// "csr_vector cuda_csr_vector t=8 block=256"
std::string describe(const PlannedVariant& v, const FormatRegistry& registry) {
  const FormatEntry* entry = registry.find(v.format);
  std::string text =
      std::string(to_string(v.stage)) + " " +
      (entry ? std::string(entry->rules->name()) : "format " + std::to_string(v.format.value));
  if (v.kernel.threads_per_row > 0) text += " t=" + std::to_string(v.kernel.threads_per_row);
  if (v.kernel.resources.threads_per_block > 0)
    text += " block=" + std::to_string(v.kernel.resources.threads_per_block);
  if (v.stage == CalibrationStage::format_bytes && to_string(v.params) != "-")
    text += " " + to_string(v.params);
  return text;
}

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// What a stage measured: per variant, per sample, (x of the fit, ms).
using StageSamples = std::vector<std::vector<SamplePoint>>;

// A variant's measurements split: the random samples (what the fits see) in plan order, and
// per banded sample (x of its random twin, T_banded / T_random), ascending in x
// (models/locality.hpp); banded_grid holds the same ratios at (row length, rows), for ELL's grid.
struct SplitMeasurements {
  std::vector<SamplePoint> random;
  std::vector<SampleShape> random_shapes;
  std::vector<SamplePoint> banded_ratio;
  std::vector<GridSample> banded_grid;
};

// In the format_bytes stage, the FormatBytesTail samples measure critical paths and a launch
// floor, not throughput, and BSR's block-row samples another shape at the same bytes: they
// stay out of its bytes fit.
bool stays_out_of_bytes_fit(const PlannedVariant& v, std::size_t s) noexcept {
  return v.stage == CalibrationStage::format_bytes && s >= format_bytes_tail_start(v);
}

SplitMeasurements split_banded(const PlannedVariant& v, const std::vector<SamplePoint>& ms) {
  SplitMeasurements out;
  for (std::size_t s = 0; s < v.samples.size(); ++s) {
    if (v.samples[s].banded || stays_out_of_bytes_fit(v, s)) continue;
    out.random.push_back(ms[s]);
    out.random_shapes.push_back(v.samples[s]);
  }
  for (std::size_t s = 0; s < v.samples.size(); ++s) {
    if (!v.samples[s].banded) continue;
    SampleShape twin = v.samples[s];
    twin.banded = false;
    for (std::size_t r = 0; r < out.random_shapes.size(); ++r) {
      if (out.random_shapes[r] != twin || !(out.random[r].y > 0.0)) continue;
      const double ratio = ms[s].y / out.random[r].y;
      out.banded_ratio.push_back({out.random[r].x, ratio});
      if (ratio > 0.0)
        out.banded_grid.push_back({.width = static_cast<double>(twin.row_length),
                                   .rows = static_cast<double>(twin.rows),
                                   .ms = ratio});
    }
  }
  std::sort(out.banded_ratio.begin(), out.banded_ratio.end(),
            [](const SamplePoint& l, const SamplePoint& r) { return l.x < r.x; });
  return out;
}

}  // namespace

double time_over_bytes_fit(const SamplePoint& bytes_and_ms, const LinearFit& fit) noexcept {
  const double predicted = fit(bytes_and_ms.x);
  return predicted > 0.0 ? bytes_and_ms.y / predicted : 0.0;
}

double banded_ratio_net_of_fixed_cost(double banded_ms, double random_ms,
                                      double fixed_ms) noexcept {
  if (!(random_ms > 0.0)) return 0.0;
  if (!(random_ms > fixed_ms) || !(fixed_ms > 0.0)) return banded_ms / random_ms;
  return std::max(banded_ms - fixed_ms, 0.0) / (random_ms - fixed_ms);
}

namespace {

// The csr_vector stage's banded ratios (row length, T_banded / T_random) net of the variant's
// fixed cost: each twin pairs with the random sample of its row length.
std::vector<SamplePoint> csr_banded_ratio(const SplitMeasurements& split, double fixed_ms) {
  std::vector<SamplePoint> out;
  for (const SamplePoint& ratio : split.banded_ratio) {
    const auto random = std::find_if(split.random.begin(), split.random.end(),
                                     [&](const SamplePoint& r) { return r.x == ratio.x; });
    if (random == split.random.end()) continue;
    out.push_back({ratio.x, banded_ratio_net_of_fixed_cost(ratio.y * random->y, random->y,
                                                           fixed_ms)});
  }
  return out;
}

// BSR's (blocks per block row, ratio) at the largest size: the base itself (ratio 1), then each
// kBsrBlockRowLengths sample; empty for other formats. The samples are of dense blocks of the
// record's block size. The ratio is each sample's time over what the record's bytes fit
// predicts for the sample's own bytes, so that it holds what the bytes do not: a sample of
// more blocks per block row has fewer block rows (less y and row pointers) and is faster for
// that alone, which the prediction already counts (model version 10 took the plain time ratio
// and counted it twice: 2x2 BSR on 25-37 blocks per block row predicted 0.57-0.8 of measured).
std::vector<SamplePoint> block_row_ratio(const PlannedVariant& v,
                                         const std::vector<SamplePoint>& ms,
                                         const SplitMeasurements& split,
                                         const LinearFit& bytes_fit) {
  const std::size_t count = block_row_sample_count(v);
  if (count == 0 || split.random.empty()) return {};
  const auto b = static_cast<double>(bsr_sample_block_dim(v.params));
  const double base = time_over_bytes_fit(split.random.back(), bytes_fit);
  if (!(base > 0.0)) return {};
  std::vector<SamplePoint> out{
      {static_cast<double>(split.random_shapes.back().row_length) / b, 1.0}};
  for (std::size_t s = v.samples.size() - count; s < v.samples.size(); ++s)
    out.push_back({static_cast<double>(v.samples[s].row_length) / b,
                   time_over_bytes_fit(ms[s], bytes_fit) / base});
  std::sort(out.begin(), out.end(),
            [](const SamplePoint& l, const SamplePoint& r) { return l.x < r.x; });
  return out;
}

// Every ELL record without banded samples of its own takes the grid of the one with them
// (plan_ell times the twins on one block size).
void share_ell_banded_ratio(std::vector<EllCalibration>& ell) {
  const auto measured = std::find_if(ell.begin(), ell.end(), [](const EllCalibration& c) {
    return !c.banded_ratio_vs_width_rows.log_ms.empty();
  });
  if (measured == ell.end()) return;
  const LogGridFit grid = measured->banded_ratio_vs_width_rows;
  for (EllCalibration& c : ell)
    if (c.banded_ratio_vs_width_rows.log_ms.empty()) c.banded_ratio_vs_width_rows = grid;
}

struct GeneratedSample {
  CsrMatrix<double> matrix;
  MatrixFeatures features;
};

// The seed leaves out long_row: a sample with a long row is its twin without, but for row 0.
CsrMatrix<double> make_sample(const SampleShape& shape, std::uint64_t seed) {
  const std::int64_t b = std::max<std::int64_t>(shape.block_dim, 1);
  const CsrMatrix<double> pattern =
      shape.banded ? banded_row_length_sample(shape.rows / b, shape.row_length / b, seed)
                   : uniform_row_length_sample(shape.rows / b, shape.row_length / b, seed);
  const CsrMatrix<double> sample = b > 1 ? blocked_sample(pattern, b) : pattern;
  return shape.long_row > 0 ? with_long_row(sample, shape.long_row) : sample;
}

GeneratedSample generate_sample(const SampleShape& shape, std::uint64_t seed) {
  GeneratedSample g{.matrix = make_sample(shape, seed), .features = {}};
  g.features = uniform_sample_features(g.matrix, shape.block_dim > 1);
  return g;
}

}  // namespace

std::int64_t CalibrationPlan::generated_nnz(CalibrationStage stage) const {
  std::vector<SampleShape> shapes;
  for (const PlannedVariant& v : variants)
    if (v.stage == stage) shapes.insert(shapes.end(), v.samples.begin(), v.samples.end());
  std::sort(shapes.begin(), shapes.end());
  shapes.erase(std::unique(shapes.begin(), shapes.end()), shapes.end());
  std::int64_t total = 0;
  for (const SampleShape& s : shapes) total += s.nnz();
  return total;
}

std::int64_t CalibrationPlan::built_nnz(CalibrationStage stage) const {
  std::int64_t total = 0;
  for (const PlannedVariant& v : variants)
    if (v.stage == stage)
      for (const SampleShape& s : v.samples) total += s.nnz();
  return total;
}

std::size_t CalibrationPlan::sample_count(CalibrationStage stage) const {
  std::size_t total = 0;
  for (const PlannedVariant& v : variants)
    if (v.stage == stage) total += v.samples.size();
  return total;
}

CalibrationPlan plan_calibration(const FormatRegistry& registry, const DeviceInfo& device,
                                 Precision precision, const CalibrationOptions& options,
                                 const KernelResourcesFn& kernel_resources) {
  validate_options(options);
  CalibrationPlan plan;
  plan.precision = precision;
  plan.max_sample_nnz = resolve_max_sample_nnz(options, device);
  if (device.is_gpu) {
    plan_csr_vector(registry, device, precision, options, plan.max_sample_nnz, kernel_resources,
                    plan);
    plan_ell(registry, precision, options, plan.max_sample_nnz, kernel_resources, plan);
  }
  plan_coo(registry, device, precision, options, plan.max_sample_nnz, kernel_resources, plan);
  plan_bytes(registry, device, options, plan.max_sample_nnz, plan);
  plan_format_bytes(registry, device, options, plan.max_sample_nnz, plan);
  if (device.is_gpu) plan_latency(registry, options, plan.max_sample_nnz, plan);
  plan_cache_resident(options, plan);
  return plan;
}

namespace {

// A rows x rows sample in which every row holds row_length non-zeros with random values;
// column_of(r, j, rng) picks row r's j-th column (ascending in j).
template <typename ColumnOf>
CsrMatrix<double> fixed_row_length_sample(const char* name, std::int64_t rows,
                                          std::int64_t row_length, std::uint64_t seed,
                                          ColumnOf column_of) {
  if (row_length < 1 || row_length > rows || rows > kMaxDimension) {
    throw_invalid(std::string(name) + ": row length " + std::to_string(row_length) +
                  " must be in [1, rows = " + std::to_string(rows) + "] and rows <= 2^31 - 1");
  }
  CsrMatrix<double> m;
  m.rows = rows;
  m.cols = rows;
  const auto nnz = static_cast<std::size_t>(rows * row_length);
  m.row_offsets.resize(static_cast<std::size_t>(rows) + 1);
  m.col_indices.resize(nnz);
  m.values.resize(nnz);
  // In fixed chunks of rows on all cores (calibration generates ~600 M non-zeros per
  // precision; single-threaded, the H100 calibration took 121 s instead of 85 s); each chunk
  // has its own stream, so the sample depends on the seed only, not on the threads.
  constexpr std::int64_t kChunkRows = 16384;
  const std::int64_t chunks = (rows + kChunkRows - 1) / kChunkRows;
  tbb::parallel_for(std::int64_t{0}, chunks, [&](std::int64_t chunk) {
    SplitMix64 rng{seed ^ (static_cast<std::uint64_t>(chunk) * 0xd1b54a32d192ed03ULL)};
    const std::int64_t first = chunk * kChunkRows, last = std::min(rows, first + kChunkRows);
    auto k = static_cast<std::size_t>(first * row_length);
    for (std::int64_t r = first; r < last; ++r) {
      m.row_offsets[static_cast<std::size_t>(r)] = static_cast<RowOffset>(k);
      for (std::int64_t j = 0; j < row_length; ++j, ++k) {
        m.col_indices[k] = static_cast<ColIndex>(column_of(r, j, rng));
        m.values[k] = 2.0 * rng.unit() - 1.0;
      }
    }
  });
  m.row_offsets.back() = static_cast<RowOffset>(nnz);
  return m;
}

}  // namespace

CsrMatrix<double> uniform_row_length_sample(std::int64_t rows, std::int64_t row_length,
                                            std::uint64_t seed) {
  return fixed_row_length_sample(
      "uniform_row_length_sample", rows, row_length, seed,
      [&](std::int64_t, std::int64_t j, SplitMix64& rng) {
        // Bin j is [j * rows / c, (j + 1) * rows / c): non-empty because c <= rows.
        const std::int64_t begin = j * rows / row_length;
        const std::int64_t end = (j + 1) * rows / row_length;
        return begin +
               static_cast<std::int64_t>(rng.next() % static_cast<std::uint64_t>(end - begin));
      });
}

CsrMatrix<double> banded_row_length_sample(std::int64_t rows, std::int64_t row_length,
                                           std::uint64_t seed) {
  return fixed_row_length_sample(
      "banded_row_length_sample", rows, row_length, seed,
      [&](std::int64_t r, std::int64_t j, SplitMix64&) {
        return std::clamp<std::int64_t>(r - row_length / 2, 0, rows - row_length) + j;
      });
}

CsrMatrix<double> with_long_row(const CsrMatrix<double>& base, std::int64_t length) {
  if (base.rows < 1 || base.nnz() < 1 || length < 1 || length > base.cols)
    throw_invalid("with_long_row: a row of " + std::to_string(length) + " entries in a " +
                  std::to_string(base.rows) + " x " + std::to_string(base.cols) +
                  " sample of " + std::to_string(base.nnz()) +
                  " non-zeros needs a row, an entry and 1 <= length <= columns");
  const auto first_rest = static_cast<std::size_t>(base.row_offsets[1]);
  CsrMatrix<double> m;
  m.rows = base.rows;
  m.cols = base.cols;
  m.col_indices.reserve(static_cast<std::size_t>(length) + base.col_indices.size() - first_rest);
  m.values.reserve(m.col_indices.capacity());
  // Evenly spread: column k * cols / length, strictly ascending since length <= cols.
  for (std::int64_t k = 0; k < length; ++k) {
    m.col_indices.push_back(static_cast<ColIndex>(k * base.cols / length));
    m.values.push_back(base.values[0]);
  }
  m.col_indices.insert(m.col_indices.end(), base.col_indices.begin() + first_rest,
                       base.col_indices.end());
  m.values.insert(m.values.end(), base.values.begin() + first_rest, base.values.end());
  const auto shift = static_cast<RowOffset>(length) - static_cast<RowOffset>(first_rest);
  m.row_offsets.resize(base.row_offsets.size());
  m.row_offsets[0] = 0;
  for (std::size_t r = 1; r < base.row_offsets.size(); ++r)
    m.row_offsets[r] = base.row_offsets[r] + shift;
  return m;
}

CsrMatrix<double> blocked_sample(const CsrMatrix<double>& pattern, std::int64_t block_dim) {
  const std::int64_t b = block_dim;
  if (b < 1 || pattern.rows > kMaxDimension / std::max<std::int64_t>(b, 1) ||
      pattern.cols > kMaxDimension / std::max<std::int64_t>(b, 1))
    throw_invalid("blocked_sample: block_dim " + std::to_string(b) + " of a " +
                  std::to_string(pattern.rows) + " x " + std::to_string(pattern.cols) +
                  " pattern must be >= 1 and keep the dimensions within 2^31 - 1");
  CsrMatrix<double> m;
  m.rows = pattern.rows * b;
  m.cols = pattern.cols * b;
  m.row_offsets.assign(static_cast<std::size_t>(m.rows) + 1, 0);
  m.col_indices.reserve(static_cast<std::size_t>(pattern.nnz() * b * b));
  m.values.reserve(static_cast<std::size_t>(pattern.nnz() * b * b));
  for (std::int64_t r = 0; r < m.rows; ++r) {
    const std::int64_t p = r / b;
    for (RowOffset k = pattern.row_offsets[static_cast<std::size_t>(p)];
         k < pattern.row_offsets[static_cast<std::size_t>(p + 1)]; ++k) {
      const std::int64_t first = pattern.col_indices[static_cast<std::size_t>(k)] * b;
      for (std::int64_t j = 0; j < b; ++j) {
        m.col_indices.push_back(static_cast<ColIndex>(first + j));
        m.values.push_back(pattern.values[static_cast<std::size_t>(k)]);
      }
    }
    m.row_offsets[static_cast<std::size_t>(r + 1)] = static_cast<RowOffset>(m.col_indices.size());
  }
  return m;
}

MatrixFeatures uniform_sample_features(const CsrMatrix<double>& m, bool count_blocks) {
  MatrixFeatures f;
  f.rows = m.rows;
  f.cols = m.cols;
  f.nnz = m.nnz();
  // Every row of one length c, but row 0 where it is a long row (with_long_row).
  const std::int64_t c = m.rows > 1 ? m.row_length(1) : m.rows > 0 ? m.row_length(0) : 0;
  const std::int64_t row0 = m.rows > 0 ? m.row_length(0) : 0;
  f.row_length_min = std::min(c, row0);
  f.row_length_max = std::max(c, row0);
  f.row_length_mean = m.rows > 0 ? static_cast<double>(f.nnz) / static_cast<double>(m.rows) : 0.0;
  f.row_length_stddev =
      m.rows > 0 ? std::abs(static_cast<double>(row0 - c)) *
                       std::sqrt(static_cast<double>(m.rows - 1)) / static_cast<double>(m.rows)
                 : 0.0;
  f.empty_rows = c == 0 ? m.rows : 0;
  if (row0 != c && row0 > 0 && c > 0) {
    f.distribution = {{.length = c, .rows = m.rows - 1}, {.length = row0, .rows = 1}};
    if (row0 < c) std::swap(f.distribution[0], f.distribution[1]);  // ascending in length
  } else if (c > 0) {
    f.distribution = {{.length = c, .rows = m.rows}};
  }
  double span_sum = 0.0;
  for (std::int64_t r = 0; r < m.rows && c > 0; ++r) {
    const auto first = m.col_indices[static_cast<std::size_t>(m.row_offsets[r])];
    const auto last = m.col_indices[static_cast<std::size_t>(m.row_offsets[r + 1] - 1)];
    span_sum += static_cast<double>(last - first + 1) / static_cast<double>(m.cols);
  }
  f.mean_row_span_fraction = m.rows > 0 ? span_sum / static_cast<double>(m.rows) : 0.0;
  f.x_sectors_per_nonzero = x_sectors_per_nonzero(m);
  if (count_blocks)
    f.format_features.emplace("cusparse_bsr", FieldSet::of(compute_cusparse_bsr_features(m)));
  return f;
}

ModelSet run_calibration_plan(const FormatRegistry& registry, Device& device,
                              const CalibrationPlan& plan, const CalibrationOptions& options,
                              const CalibrationProgressFn& on_progress) {
  validate_options(options);
  const DeviceInfo& info = device.info();
  const Precision precision = plan.precision;
  ModelSet set;
  set.device_signature = info.signature();
  set.precision = precision;
  // Paper 003 Eq. 7: the fastest ELL launch's ms per padded entry (fit_cpu_gpu).
  std::optional<double> ell_ms_per_entry;
  std::map<int, LaneLatency> lane_latency;  // by threads_per_row

  // A shape that several stages time (the largest bytes sample: coo, bytes, format_bytes,
  // latency; its long-row twin: format_bytes, latency) is generated once and kept until the
  // last of them (~0.4 GB each at the default 2^25 non-zeros).
  std::map<SampleShape, int> stages_left;
  for (const CalibrationStage stage : kStages) {
    std::set<SampleShape> shapes;
    for (const PlannedVariant& v : plan.variants)
      if (v.stage == stage) shapes.insert(v.samples.begin(), v.samples.end());
    for (const SampleShape& shape : shapes) ++stages_left[shape];
  }
  std::map<SampleShape, std::shared_ptr<const GeneratedSample>> kept;

  for (const CalibrationStage stage : kStages) {
    const auto stage_start = Clock::now();
    // cache_resident compares with the set fitted by the stages before it, unchanged while
    // the stage measures (its own records are added at the end).
    std::optional<ModelPredictor> fitted_so_far;
    if (stage == CalibrationStage::cache_resident) fitted_so_far.emplace(set);
    // Every variant of the stage that uses a shape is timed on one generated matrix.
    std::map<SampleShape, std::vector<std::pair<std::size_t, std::size_t>>> users;
    StageSamples measured(plan.variants.size());
    // cache_resident: per variant and sample, what the set fitted so far predicts for it.
    std::vector<std::vector<double>> predicted(plan.variants.size());
    for (std::size_t v = 0; v < plan.variants.size(); ++v) {
      if (plan.variants[v].stage != stage) continue;
      measured[v].resize(plan.variants[v].samples.size());
      predicted[v].resize(plan.variants[v].samples.size());
      for (std::size_t s = 0; s < plan.variants[v].samples.size(); ++s)
        users[plan.variants[v].samples[s]].emplace_back(v, s);
    }
    if (users.empty()) continue;
    CalibrationProgress progress{.stage = std::string(to_string(stage)),
                                 .done = 0,
                                 .total = plan.sample_count(stage),
                                 .detail = {},
                                 .stage_elapsed_s = 0.0};

    for (const auto& [shape, uses] : users) {
      const auto found = kept.find(shape);
      const std::shared_ptr<const GeneratedSample> generated =
          found != kept.end() ? found->second
                              : std::make_shared<const GeneratedSample>(
                                    generate_sample(shape, shape_seed(options.seed, shape)));
      if (--stages_left[shape] > 0)
        kept[shape] = generated;
      else
        kept.erase(shape);
      const CsrMatrix<double>& sample = generated->matrix;
      const MatrixFeatures& features = generated->features;
      for (const auto& [v, s] : uses) {
        const PlannedVariant& variant = plan.variants[v];
        const Candidate candidate =
            make_candidate(variant, shape, features, registry, info);
        const FormatEntry* entry = registry.find(candidate.format);
        if (entry == nullptr)
          throw Error(ErrorCode::internal,
                      "calibration: " + describe(variant, registry) + " is not registered");
        double ms = 0.0;
        {
          auto op = entry->build(sample, precision, candidate, device);
          ms = median_apply_ms(*op, device, sample, precision, options);
        }
        double x = static_cast<double>(shape.row_length);  // csr_vector: Fig. 3's c
        if (stage == CalibrationStage::coo) x = static_cast<double>(shape.nnz());
        if (stage == CalibrationStage::bytes || stage == CalibrationStage::format_bytes) {
          // The bytes the model will count for this multiply, with the format's own footprint
          // as the tuner passes it (FormatRules::device_bytes).
          const std::uint64_t matrix_bytes =
              entry->rules->device_bytes(features, precision, candidate);
          x = static_cast<double>(bytes_moved(features, matrix_bytes, info, precision,
                                              BytesCalibration{}.l2_share_for_x)
                                      .total());
        }
        if (stage == CalibrationStage::cache_resident) {
          // x = footprint; kappa = ms / what the set fitted by all other stages predicts.
          const std::uint64_t matrix_bytes =
              entry->rules->device_bytes(features, precision, candidate);
          x = footprint_bytes(features, matrix_bytes, precision);
          predicted[v][s] = fitted_so_far
                                ->predict_ms(*entry->rules, features, candidate, info,
                                             matrix_bytes)
                                .ms;
        }
        measured[v][s] = {x, ms};
        ++progress.done;
        if (on_progress) {
          char text[160];
          std::snprintf(text, sizeof text, "%s rows=%lld c=%lld%s: %.5f ms",
                        describe(variant, registry).c_str(), static_cast<long long>(shape.rows),
                        static_cast<long long>(shape.row_length),
                        shape.banded ? " banded" : "", ms);
          progress.detail = text;
          progress.stage_elapsed_s = seconds_since(stage_start);
          on_progress(progress);
        }
      }
    }

    for (std::size_t v = 0; v < plan.variants.size(); ++v) {
      const PlannedVariant& variant = plan.variants[v];
      if (variant.stage != stage) continue;
      const SplitMeasurements split = split_banded(variant, measured[v]);
      try {
        switch (stage) {
          case CalibrationStage::csr_vector: {
            const std::int64_t base_rows = variant.sample_strips * variant.rows_per_strip;
            const auto found = lane_latency.find(variant.kernel.threads_per_row);
            const LaneLatency lane = found != lane_latency.end() ? found->second : LaneLatency{};
            std::vector<SamplePoint> samples;
            for (std::size_t s = 0; s < split.random.size(); ++s)
              samples.push_back(csr_sample_at_rows(split.random[s], split.random_shapes[s].rows,
                                                   base_rows, lane.fixed_ms));
            CsrVectorCalibration c =
                fit_csr_vector(variant.kernel, samples, base_rows, variant.sample_strips);
            c.banded_ratio = csr_banded_ratio(split, lane.fixed_ms);
            c.fixed_ms = lane.fixed_ms;
            c.long_row_step_ms = lane.long_row_step_ms;
            c.long_row_step_beyond_l2_ms = lane.long_row_step_beyond_l2_ms;
            set.csr_vector.push_back(std::move(c));
            break;
          }
          case CalibrationStage::ell: {
            std::vector<GridSample> grid;
            std::vector<SamplePoint> per_entry;  // ms against rows * width
            for (std::size_t s = 0; s < split.random.size(); ++s) {
              grid.push_back({.width = static_cast<double>(split.random_shapes[s].row_length),
                              .rows = static_cast<double>(split.random_shapes[s].rows),
                              .ms = split.random[s].y});
              per_entry.push_back({grid.back().width * grid.back().rows, grid.back().ms});
            }
            const double slope = fit_linear(per_entry).slope;
            if (slope > 0.0 && (!ell_ms_per_entry || slope < *ell_ms_per_entry))
              ell_ms_per_entry = slope;
            set.ell.push_back(
                {.kernel = variant.kernel,
                 .time_vs_width_rows = fit_log_grid(grid),
                 // The ELL stage's twins cover kBandedEllWidths at every rows (on one block
                 // size; share_ell_banded_ratio gives it to the others).
                 .banded_ratio_vs_width_rows = split.banded_grid.empty()
                                                   ? LogGridFit{}
                                                   : fit_log_grid(split.banded_grid)});
            break;
          }
          case CalibrationStage::coo:
            set.coo.push_back({.kernel = variant.kernel,
                               .entries_per_thread = variant.entries_per_thread,
                               .time_vs_nnz = fit_linear(split.random),
                               .samples = split.random,
                               .banded_ratio = split.banded_ratio});
            break;
          case CalibrationStage::latency: {
            // Samples (plan_latency): tiny, the in-L2 pair, the beyond-L2 pair.
            const double tiny_ms = measured[v][0].y;
            set.launch_floor_ms =
                set.launch_floor_ms > 0.0 ? std::min(set.launch_floor_ms, tiny_ms) : tiny_ms;
            const auto lanes = static_cast<double>(variant.kernel.threads_per_row);
            // The extra steps of the long row over the twin's row 0, ceil(L / t) - ceil(c / t).
            const auto step_ms = [&](std::size_t without, std::size_t with) {
              const SampleShape& shape = variant.samples[with];
              const double steps =
                  std::ceil(static_cast<double>(shape.long_row) / lanes) -
                  std::ceil(static_cast<double>(shape.row_length) / lanes);
              return steps > 0.0
                         ? std::max(measured[v][with].y - measured[v][without].y, 0.0) / steps
                         : 0.0;
            };
            lane_latency[variant.kernel.threads_per_row] = {
                .fixed_ms = tiny_ms,
                .long_row_step_ms = step_ms(1, 2),
                .long_row_step_beyond_l2_ms = step_ms(3, 4)};
            break;
          }
          case CalibrationStage::bytes:
            set.bytes = BytesCalibration{.time_vs_bytes = fit_linear(split.random),
                                         .l2_share_for_x = BytesCalibration{}.l2_share_for_x,
                                         .samples = split.random,
                                         .banded_ratio = split.banded_ratio};
            break;
          case CalibrationStage::cache_resident: {
            // measured[v]: (footprint, ms) per sample, in plan order; kappa on the random
            // samples, the banded ratio from their twins (split_banded).
            std::vector<GridSample> grid;
            double largest = 0.0;
            for (std::size_t s = 0; s < variant.samples.size(); ++s) {
              if (variant.samples[s].banded) continue;
              const double p = predicted[v][s];
              grid.push_back({.width = static_cast<double>(variant.samples[s].row_length),
                              .rows = static_cast<double>(variant.samples[s].rows),
                              .ms = p > 0.0 ? measured[v][s].y / p : 1.0});
              largest = std::max(largest, measured[v][s].x);
            }
            CacheResidentCorrection c{
                .format = variant.format,
                .params = {},
                .block_size = 0,
                .threads_per_row = 0,
                .ratio_vs_length_rows = fit_log_grid(grid),
                .banded_ratio_vs_length_rows = split.banded_grid.empty()
                                                   ? LogGridFit{}
                                                   : fit_log_grid(split.banded_grid),
                .largest_footprint_bytes = largest};
            // Keyed as the tuner's candidates are: the launch the base stage times.
            const Candidate launch = make_candidate(variant, variant.samples.front(),
                                                    shape_features(variant.samples.front()),
                                                    registry, info);
            c.params = launch.params;
            c.block_size = launch.launch.block_size;
            c.threads_per_row = launch.launch.threads_per_row;
            c.entries_per_thread = variant.entries_per_thread;
            set.cache_resident.push_back(std::move(c));
            break;
          }
          case CalibrationStage::format_bytes: {
            const std::size_t tail = format_bytes_tail_start(variant);
            const auto at = [&](FormatBytesTail t) {
              return measured[v][tail + static_cast<std::size_t>(t)].y;
            };
            // A step is the extra time of the long row over its twin without, per entry
            // beyond the one entry (or row length) the twin's row 0 had.
            const auto step = [](double with_ms, double without_ms, const SampleShape& shape) {
              const std::int64_t extra = shape.long_row - shape.row_length;
              return extra > 0 ? std::max(with_ms - without_ms, 0.0) / static_cast<double>(extra)
                               : 0.0;
            };
            const std::size_t in_l2 =
                tail + static_cast<std::size_t>(FormatBytesTail::in_l2_with_long_row);
            const std::size_t beyond =
                tail + static_cast<std::size_t>(FormatBytesTail::largest_with_long_row);
            const LinearFit bytes_fit = fit_linear(split.random);
            set.format_bytes.push_back(
                {.format = variant.format,
                 .params = variant.params,
                 .bytes = BytesCalibration{.time_vs_bytes = bytes_fit,
                                           .l2_share_for_x = BytesCalibration{}.l2_share_for_x,
                                           .samples = split.random,
                                           .banded_ratio = split.banded_ratio},
                 .long_row_step_ms = step(at(FormatBytesTail::in_l2_with_long_row),
                                          at(FormatBytesTail::in_l2_without_long_row),
                                          variant.samples[in_l2]),
                 .long_row_step_beyond_l2_ms =
                     step(at(FormatBytesTail::largest_with_long_row), split.random.back().y,
                          variant.samples[beyond]),
                 .floor_ms = at(FormatBytesTail::tiny),
                 .block_row_ratio = block_row_ratio(variant, measured[v], split, bytes_fit)});
            break;
          }
        }
      } catch (const Error& e) {
        throw Error(ErrorCode::internal,
                    "calibration: cannot fit " + describe(variant, registry) + ": " + e.what());
      }
    }
    if (stage == CalibrationStage::ell) share_ell_banded_ratio(set.ell);
    if (on_progress) {
      progress.detail = "fitted";
      progress.stage_elapsed_s = seconds_since(stage_start);
      on_progress(progress);
    }
  }
  set.cpu_gpu = fit_cpu_gpu(registry, device, plan, options, set.coo, ell_ms_per_entry);
  // set.blocked_ell (paper 000 Sec. 5.3) stays unset: its T_t needs TW, the host-device
  // (PCIe) bandwidth, and no stage times a transfer (every sample is resident on the device, as
  // the daemon's matrices are). L, the rows below which an SM idles, would be the knee where
  // ELL time stops being flat in rows, but the grid steps rows by 4x from kEllMinRows and its
  // flat end is the launch latency, which the model has no term for: no honest L either. f_p
  // alone (the ELL slope per SM) does not make the model usable, and a guessed TW or L would
  // make its times fiction.
  return set;
}

ModelSet calibrate_precision(const FormatRegistry& registry, Device& device, Precision precision,
                             const CalibrationOptions& options,
                             const CalibrationProgressFn& on_progress) {
  const CalibrationPlan plan = plan_calibration(registry, device.info(), precision, options);
  return run_calibration_plan(registry, device, plan, options, on_progress);
}

}  // namespace spmvd
