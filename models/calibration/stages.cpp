#include <algorithm>
#include <array>
#include <numeric>
#include <string>

#include "core/error.hpp"
#include "models/calibration/cache_resident_stage.hpp"
#include "models/calibration/composed_formats_fit.hpp"
#include "models/calibration/latency_stage.hpp"
#include "models/calibration/stage.hpp"
#include "models/families/bytes/bytes_calibration.hpp"
#include "models/families/coo/coo_calibration.hpp"
#include "models/families/cpu_gpu/cpu_gpu_fit.hpp"
#include "models/families/csr_vector/csr_vector_calibration.hpp"
#include "models/families/ell/ell_calibration.hpp"

namespace spmvd {
namespace {

// latency runs before csr_vector: its fixed cost per lane count scales the csr_vector samples
// to one row count (csr_sample_at_rows), and its records complete those calibrations.
// cache_resident runs last: it compares with predictions of the finished set.
const std::array<CalibrationStageSpec, 7>& stage_table() {
  static const std::array<CalibrationStageSpec, 7> stages{
      latency_stage(), csr_vector_stage(),   ell_stage(),           coo_stage(),
      bytes_stage(),   format_bytes_stage(), cache_resident_stage()};
  return stages;
}

// latency repeats the csr_vector launches of kLatencyBlockSize, cache_resident every
// csr_vector, coo and format_bytes launch: each is planned after them.
constexpr CalibrationStage kPlanOrder[] = {
    CalibrationStage::csr_vector,    CalibrationStage::ell,          CalibrationStage::coo,
    CalibrationStage::bytes,         CalibrationStage::format_bytes, CalibrationStage::latency,
    CalibrationStage::cache_resident};

constexpr FinishingFit kFinishingFits[] = {
    {CpuGpuTimeCoefficients::kFamily, &fit_cpu_gpu_record},
    {"composed_formats", &fit_composed_formats},
};

}  // namespace

std::span<const CalibrationStageSpec> calibration_stages() { return stage_table(); }

std::span<const FinishingFit> calibration_finishing_fits() { return kFinishingFits; }

std::span<const CalibrationStage> calibration_plan_order() { return kPlanOrder; }

const CalibrationStageSpec& calibration_stage(CalibrationStage stage) {
  for (const CalibrationStageSpec& spec : stage_table())
    if (spec.stage == stage) return spec;
  throw Error(ErrorCode::internal,
              "calibration: no stage " + std::to_string(static_cast<int>(stage)));
}

std::string_view to_string(CalibrationStage stage) noexcept {
  for (const CalibrationStageSpec& spec : stage_table())
    if (spec.stage == stage) return spec.name;
  return "unknown";
}

SampleAxis row_length_axis(const TimedSample& sample) {
  return {.x = static_cast<double>(sample.shape.row_length), .predicted_ms = 0.0};
}

SplitMeasurements split_banded(const PlannedVariant& v, const std::vector<SamplePoint>& ms,
                               std::size_t fitted_samples) {
  SplitMeasurements out;
  for (std::size_t s = 0; s < v.samples.size(); ++s) {
    if (v.samples[s].banded || s >= fitted_samples) continue;
    out.random.push_back(ms[s]);
    out.random_shapes.push_back(v.samples[s]);
  }
  for (std::size_t s = 0; s < v.samples.size(); ++s) {
    if (!v.samples[s].banded) continue;
    SampleShape twin = v.samples[s];
    twin.banded = false;
    for (std::size_t r = 0; r < out.random_shapes.size(); ++r) {
      SampleShape random = out.random_shapes[r];
      random.renumbered_band = false;  // a band's random end may be the band renumbered
      if (random != twin || !(out.random[r].y > 0.0)) continue;
      const double ratio = ms[s].y / out.random[r].y;
      out.banded_ratio.push_back({out.random[r].x, ratio});
      out.banded_twins.push_back(ms[s]);
      if (ratio > 0.0)
        out.banded_grid.push_back({.width = static_cast<double>(twin.row_length),
                                   .rows = static_cast<double>(twin.rows),
                                   .ms = ratio});
    }
  }
  // Ascending in the random twin's x, each banded twin kept beside its ratio.
  std::vector<std::size_t> order(out.banded_ratio.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t l, std::size_t r) {
    return out.banded_ratio[l].x < out.banded_ratio[r].x;
  });
  std::vector<SamplePoint> ratios;
  std::vector<SamplePoint> twins;
  for (const std::size_t i : order) {
    ratios.push_back(out.banded_ratio[i]);
    twins.push_back(out.banded_twins[i]);
  }
  out.banded_ratio = std::move(ratios);
  out.banded_twins = std::move(twins);
  return out;
}

}  // namespace spmvd
