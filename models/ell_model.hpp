#pragma once
// ELL model of paper 004 Sec. 4.3.2: time from a 2-D interpolation in log(width) x log(rows)
// of calibration samples (Fig. 5).

#include <cstdint>
#include <vector>

#include "models/fitting.hpp"
#include "models/performance_model.hpp"

namespace spmvd {

struct EllCalibration {
  CalibratedKernel kernel;  // threads_per_row is 1: one thread per row (paper 004 Table 4)
  LogGridFit time_vs_width_rows;
  // (width, T_banded / T_random) at the largest calibrated rows (models/locality.hpp); empty:
  // no locality term.
  std::vector<SamplePoint> banded_ratio{};
  friend bool operator==(const EllCalibration&, const EllCalibration&) = default;
};

class EllModel final : public PerformanceModel {
 public:
  explicit EllModel(std::vector<EllCalibration> calibrations)
      : calibrations_(std::move(calibrations)) {}
  std::string_view family() const noexcept override { return "ell"; }
  // Width is candidate.params.ell_width, or row_length_max where that is 0 (the paper pads
  // every row to the longest). O(log grid).
  Prediction predict_ms(const MatrixFeatures& features, const Candidate& candidate,
                        const DeviceInfo& device) const override;
  // The same for an explicit ELL shape: also the ELL half of HYB.
  // randomness: x_span_randomness of the matrix (models/locality.hpp); 1 = the random calibration.
  Prediction predict_shape_ms(std::int64_t width, std::int64_t rows, std::uint32_t block_size,
                              double randomness = 1.0) const;

 private:
  std::vector<EllCalibration> calibrations_;
};

}  // namespace spmvd
