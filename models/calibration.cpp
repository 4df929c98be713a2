#include "models/calibration.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "core/error.hpp"
#include "models/calibration/sample_plan.hpp"
#include "models/calibration/sample_timing.hpp"
#include "models/calibration/stage.hpp"
#include "models/model_predictor.hpp"

namespace spmvd {
namespace {

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

struct GeneratedSample {
  CsrMatrix<double> matrix;
  MatrixFeatures features;
};

GeneratedSample generate_sample(const SampleShape& shape, std::uint64_t seed) {
  GeneratedSample g{.matrix = make_sample(shape, seed), .features = {}};
  g.features = sample_features(g.matrix, shape.block_dim > 1);
  return g;
}

}  // namespace

CalibrationPlan plan_calibration(const FormatRegistry& registry, const DeviceInfo& device,
                                 Precision precision, const CalibrationOptions& options,
                                 const KernelResourcesFn& kernel_resources) {
  validate_options(options);
  CalibrationPlan plan;
  plan.precision = precision;
  plan.max_sample_nnz = resolve_max_sample_nnz(options, device);
  const StagePlanInput in{.registry = registry,
                          .device = device,
                          .precision = precision,
                          .options = options,
                          .max_nnz = plan.max_sample_nnz,
                          .kernel_resources = kernel_resources};
  for (const CalibrationStage stage : calibration_plan_order())
    calibration_stage(stage).plan(in, plan);
  return plan;
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
  CalibrationState state{.set = set,
                         .registry = registry,
                         .device = info,
                         .lane_latency = {},
                         .ell_ms_per_entry = std::nullopt};

  // A shape that several stages time (the largest bytes sample: coo, bytes, format_bytes,
  // latency; its long-row twin: format_bytes, latency) is generated once and kept until the
  // last of them (~0.4 GB each at the default 2^25 non-zeros).
  std::map<SampleShape, int> stages_left;
  for (const CalibrationStageSpec& spec : calibration_stages()) {
    std::set<SampleShape> shapes;
    for (const PlannedVariant& v : plan.variants)
      if (v.stage == spec.stage) shapes.insert(v.samples.begin(), v.samples.end());
    for (const SampleShape& shape : shapes) ++stages_left[shape];
  }
  std::map<SampleShape, std::shared_ptr<const GeneratedSample>> kept;

  for (const CalibrationStageSpec& spec : calibration_stages()) {
    const CalibrationStage stage = spec.stage;
    const auto stage_start = Clock::now();
    // cache_resident compares with the set fitted by the stages before it, unchanged while
    // the stage measures (its own records are added at the end).
    std::optional<ModelPredictor> fitted_so_far;
    if (spec.compares_with_fitted_set) fitted_so_far.emplace(set);
    // Every variant of the stage that uses a shape is timed on one generated matrix.
    std::map<SampleShape, std::vector<std::pair<std::size_t, std::size_t>>> users;
    StageSamples measured(plan.variants.size());
    // cache_resident: per variant and sample, what the set fitted so far predicts for it.
    std::vector<std::vector<double>> predicted(plan.variants.size());
    std::vector<Candidate> first_candidate(plan.variants.size());
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
      // A record of a format that needs its own features is timed with them, computed on this
      // sample as the tuner would (PlannedVariant::own_features); the others with the sample's.
      std::map<FormatId, MatrixFeatures> with_own;
      const auto features_for = [&](const PlannedVariant& variant) -> const MatrixFeatures& {
        if (!variant.own_features) return generated->features;
        const auto [it, added] = with_own.try_emplace(variant.format, generated->features);
        if (const FormatEntry* entry = registry.find(variant.format); added && entry != nullptr)
          add_own_features(*entry->rules, sample, it->second);
        return it->second;
      };
      for (const auto& [v, s] : uses) {
        const PlannedVariant& variant = plan.variants[v];
        const MatrixFeatures& features = features_for(variant);
        const Candidate candidate = spec.candidate(variant, shape, features, registry, info);
        const FormatEntry* entry = registry.find(candidate.format);
        if (entry == nullptr)
          throw Error(ErrorCode::internal,
                      "calibration: " + describe(variant, registry) + " is not registered");
        double ms = 0.0;
        {
          const auto build_start = std::chrono::steady_clock::now();
          auto op = entry->build(sample, precision, candidate, device);
          device.synchronize();  // a build's asynchronous copies and kernels are part of it
          // What the tuner will expect a build of this format to cost (host_build_rates.hpp).
          if (!entry->builds_on_device)
            record_build(set.host_build_rates, candidate.format,
                         std::chrono::duration<double, std::milli>(
                             std::chrono::steady_clock::now() - build_start)
                             .count(),
                         static_cast<std::int64_t>(sample.col_indices.size()), op->device_bytes());
          ms = median_apply_ms(*op, device, sample, precision, options);
        }
        const SampleAxis axis =
            spec.axis({.variant = variant,
                       .shape = shape,
                       .features = features,
                       .candidate = candidate,
                       .rules = *entry->rules,
                       .device = info,
                       .precision = precision,
                       .fitted_so_far = fitted_so_far ? &*fitted_so_far : nullptr});
        predicted[v][s] = axis.predicted_ms;
        measured[v][s] = {axis.x, ms};
        if (s == 0) first_candidate[v] = candidate;
        ++progress.done;
        if (on_progress) {
          // x: the stage's axis (bytes moved, a footprint, a row length), which --verbose
          // logs carry so that a fit can be recomputed from them.
          char text[192];
          std::snprintf(text, sizeof text, "%s rows=%lld c=%lld%s%s%s: %.7g ms, x %.9g",
                        describe(variant, registry).c_str(), static_cast<long long>(shape.rows),
                        static_cast<long long>(shape.row_length), shape.banded ? " banded" : "",
                        shape.renumbered_band && !shape.banded ? " renumbered" : "",
                        shape.mixed_lengths ? " mixed" : "", ms, axis.x);
          progress.detail = text;
          progress.stage_elapsed_s = seconds_since(stage_start);
          on_progress(progress);
        }
      }
    }

    for (std::size_t v = 0; v < plan.variants.size(); ++v) {
      const PlannedVariant& variant = plan.variants[v];
      if (variant.stage != stage) continue;
      const SplitMeasurements split =
          split_banded(variant, measured[v],
                       spec.fitted_samples ? spec.fitted_samples(variant) : variant.samples.size());
      try {
        spec.fit({.variant = variant,
                  .ms = measured[v],
                  .predicted = predicted[v],
                  .split = split,
                  .first_candidate = first_candidate[v]},
                 state);
      } catch (const Error& e) {
        throw Error(ErrorCode::internal,
                    "calibration: cannot fit " + describe(variant, registry) + ": " + e.what());
      }
    }
    if (spec.after_fits) spec.after_fits(state);
    if (on_progress) {
      progress.detail = "fitted";
      progress.stage_elapsed_s = seconds_since(stage_start);
      on_progress(progress);
    }
  }
  for (const FinishingFit& finishing : calibration_finishing_fits())
    finishing.fit({.state = state, .device = device, .plan = plan, .options = options});
  // Paper 000's blocked-ELL time (models/blocked_ell_time_model.hpp, Sec. 5.3) is not
  // calibrated, so no set holds it: its T_t needs TW, the host-device (PCIe) bandwidth, and no
  // stage times a transfer (every sample is resident on the device, as the daemon's matrices
  // are). L, the rows below which an SM idles, would be the knee where ELL time stops being
  // flat in rows, but the grid steps rows by 4x from kEllMinRows and its flat end is the launch
  // latency, which the model has no term for: no honest L either. f_p alone (the ELL slope per
  // SM) does not make the model usable, and a guessed TW or L would make its times fiction.
  return set;
}

ModelSet calibrate_precision(const FormatRegistry& registry, Device& device, Precision precision,
                             const CalibrationOptions& options,
                             const CalibrationProgressFn& on_progress) {
  const CalibrationPlan plan = plan_calibration(registry, device.info(), precision, options);
  return run_calibration_plan(registry, device, plan, options, on_progress);
}

}  // namespace spmvd
