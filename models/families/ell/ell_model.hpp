#pragma once
// ELL model of paper 004 Sec. 4.3.2: time from a 2-D interpolation in log(width) x log(rows)
// of calibration samples (Fig. 5).

#include <tuple>
#include <cstdint>
#include <vector>

#include "core/field_set.hpp"
#include "models/fitting.hpp"
#include "models/performance_model.hpp"

namespace spmvd {

struct EllCalibration {
  CalibratedKernel kernel;  // threads_per_row is 1: one thread per row (paper 004 Table 4)
  LogGridFit time_vs_width_rows;
  // T_banded / T_random over (width, rows) (models/locality.hpp; LogGridFit's ms holds it), at
  // widths kBandedEllWidths and every rows of the time grid; empty: no locality term. A band
  // pays where many rows stream x through L2 (0.5-0.6 at a million rows on an H100), hardly
  // where a few thousand rows are one launch's latency: a ratio at the largest rows alone made
  // small banded matrices (olm1000, ani4, 4elt) 15-30 % fast.
  LogGridFit banded_ratio_vs_width_rows{};
  static constexpr auto kFields = std::tuple{
      declare_field("kernel", &EllCalibration::kernel),
      declare_field("time_vs_width_rows", &EllCalibration::time_vs_width_rows),
      declare_field("banded_ratio_vs_width_rows", &EllCalibration::banded_ratio_vs_width_rows)};
  friend bool operator==(const EllCalibration&, const EllCalibration&) = default;
};

class EllModel {
 public:
  explicit EllModel(std::vector<EllCalibration> calibrations)
      : calibrations_(std::move(calibrations)) {}
  std::string_view family() const noexcept { return "ell"; }
  // Width is cuda_ell's ell_width, or row_length_max for a candidate without parameters (the paper pads
  // every row to the longest). O(log grid).
  Prediction predict_ms(const MatrixFeatures& features, const Candidate& candidate,
                        const DeviceInfo& device) const;
  // The same for an explicit ELL shape: also the ELL half of HYB.
  // randomness: x_span_randomness of the matrix (models/locality.hpp); 1 = the random calibration.
  Prediction predict_shape_ms(std::int64_t width, std::int64_t rows, std::uint32_t block_size,
                              double randomness = 1.0) const;
  // A padded ELL of `width` whose warps walk `walked` slots (ell_walked_width: each row stops
  // with the group of four holding its first padding slot) and gather `gathered_nonzeros`: the
  // grid at the walk, its random gathers' excess over the banded twin paid per non-zero
  // (randomness x the non-zeros' share of the walked slots), and at least a launch of one row
  // of the width (the warps of the longest rows still walk it). cuda_ell, and cuda_hyb's ELL
  // part (the same kernel).
  Prediction predict_walked_ms(std::int64_t width, std::int64_t walked, std::int64_t rows,
                               std::int64_t gathered_nonzeros, std::uint32_t block_size,
                               double randomness) const;

 private:
  std::vector<EllCalibration> calibrations_;
};

}  // namespace spmvd
