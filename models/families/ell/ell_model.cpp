#include "models/families/ell/ell_model.hpp"

#include <algorithm>

#include "kernels/formats/cuda_ell/cuda_ell_rules.hpp"
#include "models/locality.hpp"

namespace spmvd {

Prediction EllModel::predict_ms(const MatrixFeatures& features, const Candidate& candidate,
                                const DeviceInfo& /*device*/) const {
  const std::int64_t width =
      candidate.params.empty() ? features.row_length_max
                               : static_cast<std::int64_t>(CudaEllRules::params_of(candidate).ell_width);
  return predict_shape_ms(width, features.rows, candidate.launch.block_size,
                          x_span_randomness(features));
}

Prediction EllModel::predict_shape_ms(std::int64_t width, std::int64_t rows,
                                      std::uint32_t block_size, double randomness) const {
  bool exact = false;
  const EllCalibration& cal = nearest_calibration(std::span<const EllCalibration>(calibrations_),
                                                  block_size, 1, family(), exact);
  const LogGridFit& grid = cal.time_vs_width_rows;
  // A width-0 or empty ELL still launches: it costs what the smallest calibrated shape costs.
  const double w = static_cast<double>(std::max<std::int64_t>(width, 1));
  const double r = static_cast<double>(std::max<std::int64_t>(rows, 1));
  double ms = grid(w, r);
  // The grid clamps outside itself. Below it that is right (a launch-latency floor); above it
  // the GPU is full and paper 004's Eq. (*) makes time additive over iterations, so time grows
  // in proportion to the rows (and entries per row) beyond the largest calibrated ones.
  if (!grid.rows.empty() && r > grid.rows.back()) ms *= r / grid.rows.back();
  if (!grid.widths.empty() && w > grid.widths.back()) ms *= w / grid.widths.back();
  if (!cal.banded_ratio_vs_width_rows.log_ms.empty())
    ms *= locality_factor(cal.banded_ratio_vs_width_rows(w, r), randomness);
  const double confidence = 0.75 * (grid.covers(w, r) ? 1.0 : 0.7) * (exact ? 1.0 : 0.7);
  return {.ms = ms, .confidence = confidence};
}

}  // namespace spmvd
