#include "models/calibration/latency_stage.hpp"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "models/calibration/sample_plan.hpp"
#include "models/families/csr_vector/csr_vector_calibration.hpp"

namespace spmvd {
namespace {

// One latency variant per planned csr_vector variant of kLatencyBlockSize: the tiny sample,
// the in-L2 long-row pair, and the beyond-L2 pair (the largest random sample without and with
// a long row).
void plan_latency(const FormatRegistry& registry, const CalibrationOptions& o, std::int64_t max_nnz,
                  CalibrationPlan& plan) {
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

void plan(const StagePlanInput& in, CalibrationPlan& plan) {
  if (in.device.is_gpu) plan_latency(in.registry, in.options, in.max_nnz, plan);
}

void fit(const VariantMeasurements& m, CalibrationState& state) {
  const PlannedVariant& variant = m.variant;
  ModelSet& set = state.set;
  // Samples (plan_latency): tiny, the in-L2 pair, the beyond-L2 pair.
  const double tiny_ms = m.ms[0].y;
  set.launch_floor_ms =
      set.launch_floor_ms > 0.0 ? std::min(set.launch_floor_ms, tiny_ms) : tiny_ms;
  const auto lanes = static_cast<double>(variant.kernel.threads_per_row);
  // The extra steps of the long row over the twin's row 0, ceil(L / t) - ceil(c / t).
  const auto step_ms = [&](std::size_t without, std::size_t with) {
    const SampleShape& shape = variant.samples[with];
    const double steps = std::ceil(static_cast<double>(shape.long_row) / lanes) -
                         std::ceil(static_cast<double>(shape.row_length) / lanes);
    return steps > 0.0 ? std::max(m.ms[with].y - m.ms[without].y, 0.0) / steps : 0.0;
  };
  state.lane_latency[variant.kernel.threads_per_row] = {
      .fixed_ms = tiny_ms,
      .long_row_step_ms = step_ms(1, 2),
      .long_row_step_beyond_l2_ms = step_ms(3, 4)};
}

}  // namespace

CalibrationStageSpec latency_stage() {
  return {.stage = CalibrationStage::latency,
          .name = "latency",
          .plan = plan,
          .candidate = csr_vector_candidate,  // the csr_vector variant's own launch
          .axis = row_length_axis,
          .fit = fit};
}

}  // namespace spmvd
