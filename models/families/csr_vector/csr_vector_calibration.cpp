#include "models/families/csr_vector/csr_vector_calibration.hpp"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "kernels/formats/cuda_csr_scalar/cuda_csr_scalar_rules.hpp"
#include "kernels/formats/cuda_csr_vector/cuda_csr_vector_rules.hpp"
#include "models/cache_resident.hpp"
#include "models/calibration/sample_plan.hpp"
#include "models/families/bytes/bytes_model.hpp"
#include "models/families/csr_vector/csr_vector_model.hpp"
#include "models/occupancy.hpp"

namespace spmvd {
namespace {

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
          v.samples.push_back(
              {.rows = streaming_rows(rows, c, device, precision), .row_length = c});
      add_banded_twins(v, kBandedCsrRowLengths, std::nullopt);
      plan.variants.push_back(std::move(v));
    }
  }
}

void plan(const StagePlanInput& in, CalibrationPlan& plan) {
  if (in.device.is_gpu)
    plan_csr_vector(in.registry, in.device, in.precision, in.options, in.max_nnz,
                    in.kernel_resources, plan);
}

// The csr_vector stage's banded ratios (row length, T_banded / T_random) net of the variant's
// fixed cost: each twin pairs with the random sample of its row length.
std::vector<SamplePoint> csr_banded_ratio(const SplitMeasurements& split, double fixed_ms) {
  std::vector<SamplePoint> out;
  for (const SamplePoint& ratio : split.banded_ratio) {
    const auto random = std::find_if(split.random.begin(), split.random.end(),
                                     [&](const SamplePoint& r) { return r.x == ratio.x; });
    if (random == split.random.end()) continue;
    out.push_back(
        {ratio.x, banded_ratio_net_of_fixed_cost(ratio.y * random->y, random->y, fixed_ms)});
  }
  return out;
}

void fit(const VariantMeasurements& m, CalibrationState& state) {
  const PlannedVariant& variant = m.variant;
  const SplitMeasurements& split = m.split;
  const std::int64_t base_rows = variant.sample_strips * variant.rows_per_strip;
  const auto found = state.lane_latency.find(variant.kernel.threads_per_row);
  const LaneLatency lane = found != state.lane_latency.end() ? found->second : LaneLatency{};
  std::vector<SamplePoint> samples;
  for (std::size_t s = 0; s < split.random.size(); ++s)
    samples.push_back(
        csr_sample_at_rows(split.random[s], split.random_shapes[s].rows, base_rows, lane.fixed_ms));
  CsrVectorCalibration c =
      fit_csr_vector(variant.kernel, samples, base_rows, variant.sample_strips);
  c.banded_ratio = csr_banded_ratio(split, lane.fixed_ms);
  c.fixed_ms = lane.fixed_ms;
  c.long_row_step_ms = lane.long_row_step_ms;
  c.long_row_step_beyond_l2_ms = lane.long_row_step_beyond_l2_ms;
  state.set.records.update<CsrVectorRecord>(
      [&](CsrVectorRecord& r) { r.variants.push_back(std::move(c)); });
}

}  // namespace

double banded_ratio_net_of_fixed_cost(double banded_ms, double random_ms,
                                      double fixed_ms) noexcept {
  if (!(random_ms > 0.0)) return 0.0;
  if (!(random_ms > fixed_ms) || !(fixed_ms > 0.0)) return banded_ms / random_ms;
  return std::max(banded_ms - fixed_ms, 0.0) / (random_ms - fixed_ms);
}

Candidate csr_vector_candidate(const PlannedVariant& v, const SampleShape& shape,
                               const MatrixFeatures&, const FormatRegistry&,
                               const DeviceInfo& device) {
  const auto block = static_cast<std::uint32_t>(v.kernel.resources.threads_per_block);
  const auto tpr = static_cast<std::uint32_t>(v.kernel.threads_per_row);
  // The launch the format's own rules produce: one wave of blocks, grid-stride beyond.
  return {.format = v.format,
          .params = {},
          .launch = {.block_size = block,
                     .threads_per_row = tpr,
                     .grid_size = CudaCsrVectorRules::grid_size(shape.rows, tpr, block, device)}};
}

CalibrationStageSpec csr_vector_stage() {
  return {.stage = CalibrationStage::csr_vector,
          .name = "csr_vector",
          .plan = plan,
          .candidate = csr_vector_candidate,
          .axis = row_length_axis,  // Fig. 3's c
          .fit = fit};
}

}  // namespace spmvd
