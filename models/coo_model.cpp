#include "models/coo_model.hpp"

#include <algorithm>

#include "models/locality.hpp"

namespace spmvd {

Prediction CooModel::predict_ms(const MatrixFeatures& features, const Candidate& candidate,
                                const DeviceInfo& /*device*/) const {
  return predict_nnz_ms(features.nnz, candidate.launch.block_size, x_randomness(features));
}

Prediction CooModel::predict_nnz_ms(std::int64_t nnz, std::uint32_t block_size,
                                    double randomness) const {
  bool exact = false;
  const CooCalibration& cal = nearest_calibration(std::span<const CooCalibration>(calibrations_),
                                                  block_size, 1, family(), exact);
  const LinearFit& fit = cal.time_vs_nnz;
  // Below the smallest sample the line would run under the launch floor: hold it there.
  const double x = std::max(static_cast<double>(nnz), fit.quality.x_min);
  double confidence = 0.75 * quality_factor(fit.quality) * (exact ? 1.0 : 0.7);
  if (x > fit.quality.x_max) confidence *= 0.85;  // linear extrapolation: sound for COO
  return {.ms = fit(x) * locality_factor(cal.banded_ratio, x, randomness),
          .confidence = confidence};
}

}  // namespace spmvd
