#include "models/families/coo/coo_model.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"

#include "models/locality.hpp"

namespace spmvd {

double coo_entries_per_thread(std::int64_t nnz, const LaunchConfig& launch) noexcept {
  if (launch.grid_size == 0 || launch.block_size == 0) return 0.0;
  return std::max(static_cast<double>(std::max<std::int64_t>(nnz, 0)) /
                      (static_cast<double>(launch.block_size) *
                       static_cast<double>(launch.grid_size)),
                  1.0);
}

Prediction CooModel::predict_ms(const MatrixFeatures& features, const Candidate& candidate,
                                const DeviceInfo& /*device*/) const {
  return predict_nnz_ms(features.nnz, candidate.launch, x_gather_randomness(features));
}

Prediction CooModel::predict_nnz_ms(std::int64_t nnz, const LaunchConfig& launch,
                                    double randomness) const {
  if (calibrations_.empty()) {
    throw Error(ErrorCode::failed_precondition, "no coo calibration in the model set");
  }
  // E outweighs any block step, as lanes per row do for CSR vector (variant_distance).
  const double entries = coo_entries_per_thread(nnz, launch);
  const CooCalibration* cal = nullptr;
  double best = 0.0;
  for (const CooCalibration& c : calibrations_) {
    const double d = kWorkShapeStepWeight * log2_gap(entries, c.entries_per_thread) +
                     variant_distance(c.kernel, launch.block_size, 1);
    if (cal == nullptr || d < best) {
      cal = &c;
      best = d;
    }
  }
  // Exact: E within a fifth (tiny matrices round E down) on the calibrated block size.
  const bool exact = log2_gap(entries, cal->entries_per_thread) < 0.25 &&
                     variant_distance(cal->kernel, launch.block_size, 1) == 0.0;
  const LinearFit& fit = cal->time_vs_nnz;
  // Below the smallest sample the line would run under the launch floor: hold it there.
  const double x = std::max(static_cast<double>(nnz), fit.quality.x_min);
  double confidence = 0.75 * quality_factor(fit.quality) * (exact ? 1.0 : 0.7);
  if (x > fit.quality.x_max) confidence *= 0.85;  // linear extrapolation: sound for COO
  return {.ms = fit(x) * locality_factor(cal->banded_ratio, x, randomness),
          .confidence = confidence};
}

}  // namespace spmvd
