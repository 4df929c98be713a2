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

// Why the gathers are counted apart from the walk: the grid's random samples gather at every
// slot they walk (rows of one length), while a row that stops short of its warp's walk idles
// through the rest of it, and a padding slot is never gathered (grouped_slot_sum). So the
// random samples' excess over their banded twins, the cost of scattered gathers, is paid per
// non-zero, and the banded time per walked slot. On the 20 unseen matrices of docs/TUNER.md
// (H100, model version 41, the exhaustive run's 96 candidates each) the renumbered meshes whose
// rows vary in length (ct2010, bayer10, luxembourg, power: walks 1.5-4x their mean row)
// measured 0.63-0.73 of cuda_ell's prediction at the walk's gathers and 0.91-1.11 at their own;
// the ell family's median error there 21.9 -> 10.2 %, on the suite's version 41 run 7.2 -> 4.4 %.
Prediction EllModel::predict_walked_ms(std::int64_t width, std::int64_t walked, std::int64_t rows,
                                       std::int64_t gathered_nonzeros, std::uint32_t block_size,
                                       double randomness) const {
  const double slots = static_cast<double>(std::max<std::int64_t>(rows, 0)) *
                       static_cast<double>(std::max<std::int64_t>(walked, 0));
  const double gathered_share =
      slots > 0.0 ? std::clamp(static_cast<double>(gathered_nonzeros) / slots, 0.0, 1.0) : 1.0;
  Prediction p = predict_shape_ms(walked, rows, block_size, randomness * gathered_share);
  // The warps of the longest rows still walk the width: at least a launch of a few rows that
  // long (the grid clamps below its fewest rows: one wave, its time that walk's chain).
  if (walked < width) p.ms = std::max(p.ms, predict_shape_ms(width, 1, block_size, randomness).ms);
  return p;
}

}  // namespace spmvd
