#pragma once
// One calibration stage as the driver (models/calibration.cpp) runs it: how it plans its
// variants, which launch a variant's sample is timed with, what x a timed sample has in the
// stage's fit, and how a variant's measurements become records of the ModelSet. Each stage
// lives beside what it calibrates (models/families/<name>/<name>_calibration.*, and the two
// cross-family corrections in models/calibration/latency_stage.* and cache_resident_stage.*);
// calibration_stages() lists them, in the order they run.

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <vector>

#include "core/device_info.hpp"
#include "core/matrix_features.hpp"
#include "kernels/device.hpp"
#include "kernels/format_registry.hpp"
#include "models/calibration/calibration_plan.hpp"
#include "models/fitting.hpp"
#include "models/model_predictor.hpp"
#include "models/model_set.hpp"

namespace spmvd {

// What a stage's plan function sees: the resolved max_sample_nnz, and the variants planned so
// far in plan.variants (latency and cache_resident repeat launches planned before them).
struct StagePlanInput {
  const FormatRegistry& registry;
  const DeviceInfo& device;
  Precision precision;
  const CalibrationOptions& options;
  std::int64_t max_nnz;
  const KernelResourcesFn& kernel_resources;
};

// One timed sample, for the stage's x: the variant, its sample, the launch it was timed with
// and the format's rules. fitted_so_far: the set fitted by the stages before (only for a stage
// with compares_with_fitted_set).
struct TimedSample {
  const PlannedVariant& variant;
  const SampleShape& shape;
  const MatrixFeatures& features;
  const Candidate& candidate;
  const FormatRules& rules;
  const DeviceInfo& device;
  Precision precision;
  const ModelPredictor* fitted_so_far;
};

// A timed sample's x in its stage's fit, and (compares_with_fitted_set) what the set fitted so
// far predicts for it.
struct SampleAxis {
  double x = 0.0;
  double predicted_ms = 0.0;
};

// A variant's measurements split: the random samples (what the fits see) in plan order, and
// per banded sample (x of its random twin, T_banded / T_random), ascending in x
// (models/locality.hpp), with the banded sample's own (x, ms) at the same index in
// banded_twins; banded_grid holds the same ratios at (row length, rows), for ELL's grid.
struct SplitMeasurements {
  std::vector<SamplePoint> random;
  std::vector<SampleShape> random_shapes;
  std::vector<SamplePoint> banded_ratio;
  std::vector<SamplePoint> banded_twins;
  std::vector<GridSample> banded_grid;
};

// Splits a variant's (x, ms) per sample; samples from index `fitted_samples` on are neither
// random nor banded (they stay out of the fits: format_bytes' tail).
SplitMeasurements split_banded(const PlannedVariant& v, const std::vector<SamplePoint>& ms,
                               std::size_t fitted_samples);

// What the latency stage measured for one threads_per_row (plan_latency), for the csr_vector
// calibrations of those lanes.
struct LaneLatency {
  double fixed_ms = 0.0;
  double long_row_step_ms = 0.0;
  double long_row_step_beyond_l2_ms = 0.0;
};

// What the stages fit into and hand each other while the driver runs them.
struct CalibrationState {
  ModelSet& set;
  const FormatRegistry& registry;
  const DeviceInfo& device;
  std::map<int, LaneLatency> lane_latency;  // by threads_per_row: latency -> csr_vector
  // Paper 003 Eq. 7: the fastest ELL launch's ms per padded entry (fit_cpu_gpu).
  std::optional<double> ell_ms_per_entry;
};

// One variant's measurements, for its stage's fit: ms[s] is (x, ms) of variant.samples[s];
// predicted[s] what the set fitted so far predicts (compares_with_fitted_set), else 0.
struct VariantMeasurements {
  const PlannedVariant& variant;
  const std::vector<SamplePoint>& ms;
  const std::vector<double>& predicted;
  const SplitMeasurements& split;
  // The candidate the variant's first sample was timed with (its launch, as the rules chose it
  // on that sample's features, own features included).
  const Candidate& first_candidate;
};

struct CalibrationStageSpec {
  CalibrationStage stage;
  std::string_view name;  // to_string(CalibrationStage)
  // Appends the stage's variants to plan.variants (nothing where the device or the registry
  // lacks its formats).
  void (*plan)(const StagePlanInput& in, CalibrationPlan& plan);
  // The candidate a variant's sample is timed with: the launch the format's own rules produce.
  Candidate (*candidate)(const PlannedVariant& v, const SampleShape& shape,
                         const MatrixFeatures& features, const FormatRegistry& registry,
                         const DeviceInfo& device);
  SampleAxis (*axis)(const TimedSample& sample);
  // Fits one variant into state.set (or state); throws Error when it cannot.
  void (*fit)(const VariantMeasurements& m, CalibrationState& state);
  // After every variant of the stage is fitted (may be null).
  void (*after_fits)(CalibrationState& state) = nullptr;
  // The samples of a variant that split_banded sees (null: all of them).
  std::size_t (*fitted_samples)(const PlannedVariant& v) = nullptr;
  // The stage compares with predictions of the set fitted by the stages before it.
  bool compares_with_fitted_set = false;
};

// What a fit made after every stage sees: the state the stages fitted, the device (such a fit
// may time samples of its own, outside the plan), the plan and the options.
struct FinishingFitInput {
  CalibrationState& state;
  Device& device;
  const CalibrationPlan& plan;
  const CalibrationOptions& options;
};

// A family's fit from what the stages measured, made once they have all run (cpu_gpu: paper
// 003's coefficients from the coo and ell stages), or a set field's timed on samples of its own
// (the composed formats' launch floors and host build rates).
struct FinishingFit {
  std::string_view name;  // the family or set field it fits
  // Puts the family's record into in.state.set, or nothing where it cannot be fitted.
  void (*fit)(const FinishingFitInput& in);
};

// Every stage, in the order they run.
std::span<const CalibrationStageSpec> calibration_stages();
// The finishing fits, in the order they run after the stages.
std::span<const FinishingFit> calibration_finishing_fits();
// The order plan_calibration plans them in, which is the order of plan.variants: latency and
// cache_resident after the variants whose launches they repeat.
std::span<const CalibrationStage> calibration_plan_order();
// The entry of `stage` in calibration_stages().
const CalibrationStageSpec& calibration_stage(CalibrationStage stage);

// x = the sample's row length (csr_vector: Fig. 3's c; ell: its width).
SampleAxis row_length_axis(const TimedSample& sample);

}  // namespace spmvd
