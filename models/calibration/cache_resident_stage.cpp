#include "models/calibration/cache_resident_stage.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <utility>
#include <vector>

#include "kernels/formats/cusparse_bsr/cusparse_bsr_rules.hpp"
#include "models/cache_resident.hpp"
#include "models/calibration/sample_plan.hpp"
#include "models/families/bytes/bytes_model.hpp"

namespace spmvd {
namespace {

// Whether the format of a record timed on structure alone (bands-only, or on renumbered bands)
// offers a candidate of the record's lanes on the grid's sample of this shape, with its own
// features counted as the run counts them. EHYB is not offered on bands of two entries a row: a
// path, every hop of which reaches new rows (neighbourhood growth 1), so no part keeps its
// neighbours.
bool offered_on(const FormatRules& rules, const DeviceInfo& device, const PlannedVariant& base,
                const SampleShape& shape, std::uint64_t seed) {
  const std::vector<Candidate> offered = rules.candidates(
      offering_features(rules, make_sample(shape, shape_seed(seed, shape))), device);
  return std::any_of(offered.begin(), offered.end(), [&](const Candidate& c) {
    return base.kernel.threads_per_row == 0 ||
           c.launch.threads_per_row == static_cast<std::uint32_t>(base.kernel.threads_per_row);
  });
}

// Whether a grid point's CSR, x and y fit in the device's L2 (any, where the device does not
// say): the grid is of in-L2 samples; a point beyond L2 would time the DRAM regime that the
// family models already fit, at the cost of the grid's largest builds.
bool fits_in_l2(const SampleShape& shape, const DeviceInfo& device, Precision precision) {
  if (device.l2_bytes == 0) return true;
  const MatrixFeatures features = shape_features(shape);
  return footprint_bytes(features, csr_storage_bytes_estimate(features, precision), precision) <=
         static_cast<double>(device.l2_bytes);
}

// One cache_resident variant per planned csr_vector, coo and format_bytes variant.
void plan_cache_resident(const FormatRegistry& registry, const DeviceInfo& device,
                         Precision precision, const CalibrationOptions& o, CalibrationPlan& plan) {
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
    // A bands-only record (its format is offered on no random sample): the grid banded alone,
    // timed with its own features as its base was; kappa from those, no banded ratio. A record
    // on renumbered bands: those, as its random end.
    for (const std::int64_t rows : whole_blocks(o.cache_resident_rows))
      for (const std::int64_t length : whole_blocks(o.cache_resident_row_lengths)) {
        const SampleShape shape{.rows = rows,
                                .row_length = length,
                                .banded = base.bands_only,
                                .block_dim = b,
                                .renumbered_band = base.renumbered_bands,
                                .mixed_lengths = base.renumbered_bands};
        if (fits_in_l2(shape, device, precision)) v.samples.push_back(shape);
      }
    // Every grid point again banded: the in-L2 banded ratio (models/cache_resident.hpp).
    if (!base.bands_only) add_banded_twins(v, {}, std::nullopt);
    // A format offered on structure alone keeps the points it is offered on.
    if (base.bands_only || base.renumbered_bands) {
      const FormatEntry* entry = registry.find(base.format);
      std::erase_if(v.samples, [&](const SampleShape& shape) {
        return entry == nullptr || !offered_on(*entry->rules, device, base, shape, o.seed);
      });
      if (v.samples.empty()) continue;
    }
    added.push_back(std::move(v));
  }
  plan.variants.insert(plan.variants.end(), added.begin(), added.end());
}

void plan(const StagePlanInput& in, CalibrationPlan& plan) {
  plan_cache_resident(in.registry, in.device, in.precision, in.options, plan);
}

// The launch of the record this variant corrects: its base stage's.
Candidate candidate(const PlannedVariant& v, const SampleShape& shape,
                    const MatrixFeatures& features, const FormatRegistry& registry,
                    const DeviceInfo& device) {
  return calibration_stage(v.base_stage).candidate(v, shape, features, registry, device);
}

SampleAxis axis(const TimedSample& sample) {
  // x = footprint; kappa = ms / what the set fitted by all other stages predicts.
  const std::uint64_t matrix_bytes =
      sample.rules.streamed_bytes(sample.features, sample.precision, sample.candidate);
  return {.x = footprint_bytes(sample.features, matrix_bytes, sample.precision),
          .predicted_ms = sample.fitted_so_far
                              ->predict_ms(sample.rules, sample.features, sample.candidate,
                                           sample.device, matrix_bytes)
                              .ms};
}

void fit(const VariantMeasurements& m, CalibrationState& state) {
  const PlannedVariant& variant = m.variant;
  const SplitMeasurements& split = m.split;
  // m.ms: (footprint, ms) per sample, in plan order; kappa on the random
  // samples, the banded ratio from their twins (split_banded).
  std::vector<GridSample> grid;
  double largest = 0.0;
  for (std::size_t s = 0; s < variant.samples.size(); ++s) {
    if (variant.samples[s].banded && !variant.bands_only) continue;
    const double p = m.predicted[s];
    grid.push_back({.width = static_cast<double>(variant.samples[s].row_length),
                    .rows = static_cast<double>(variant.samples[s].rows),
                    .ms = p > 0.0 ? m.ms[s].y / p : 1.0});
    largest = std::max(largest, m.ms[s].x);
  }
  CacheResidentCorrection c{.format = variant.format,
                            .params = {},
                            .block_size = 0,
                            .threads_per_row = 0,
                            .ratio_vs_length_rows = fit_log_grid(complete_grid_by_rows(grid)),
                            .banded_ratio_vs_length_rows =
                                split.banded_grid.empty()
                                    ? LogGridFit{}
                                    : fit_log_grid(complete_grid_by_rows(split.banded_grid)),
                            .largest_footprint_bytes = largest};
  // Keyed as the tuner's candidates are: the launch the base stage times.
  // (A format that needs its own features offers nothing on shape features: the launch it was
  // timed with, chosen on its own features.)
  const Candidate launch =
      variant.own_features
          ? m.first_candidate
          : candidate(variant, variant.samples.front(), shape_features(variant.samples.front()),
                      state.registry, state.device);
  c.params = launch.params;
  c.block_size = launch.launch.block_size;
  c.threads_per_row = launch.launch.threads_per_row;
  c.entries_per_thread = variant.entries_per_thread;
  state.set.cache_resident.push_back(std::move(c));
}

}  // namespace

std::vector<GridSample> complete_grid_by_rows(std::vector<GridSample> grid) {
  std::set<double> widths, rows;
  for (const GridSample& g : grid) {
    widths.insert(g.width);
    rows.insert(g.rows);
  }
  const std::vector<GridSample> sampled = grid;
  for (const double w : widths)
    for (const double r : rows) {
      const auto at = [&](const GridSample& g) { return g.width == w && g.rows == r; };
      if (std::any_of(sampled.begin(), sampled.end(), at)) continue;
      // (distance in log rows, rows) of the nearest sampled cell of this row length.
      const auto key = [&](const GridSample& g) {
        return std::pair(std::abs(std::log(g.rows / r)), g.rows);
      };
      const GridSample* nearest = nullptr;
      for (const GridSample& g : sampled)
        if (g.width == w && (nearest == nullptr || key(g) < key(*nearest))) nearest = &g;
      grid.push_back({.width = w, .rows = r, .ms = nearest->ms});
    }
  return grid;
}

CalibrationStageSpec cache_resident_stage() {
  return {.stage = CalibrationStage::cache_resident,
          .name = "cache_resident",
          .plan = plan,
          .candidate = candidate,
          .axis = axis,
          .fit = fit,
          .after_fits = nullptr,
          .fitted_samples = nullptr,
          .compares_with_fitted_set = true};
}

}  // namespace spmvd
