#pragma once
// CSR-vector model of paper 004 Sec. 4.3.1: strip-wise estimation from a piecewise fit of time
// against row length (Fig. 3) and a linear fit of time against strip non-zeros (Fig. 4).

#include <cstdint>
#include <span>
#include <vector>

#include "models/fitting.hpp"
#include "models/performance_model.hpp"

namespace spmvd {

// One calibrated CSR-vector variant. The sample matrices (paper 004 Sec. 4.3.1) have
// sample_strips strips of M * P * (block size / threads_per_row) rows, every row of one length c.
struct CsrVectorCalibration {
  CalibratedKernel kernel;
  std::int64_t sample_strips = 1;  // strips per sample matrix; the paper uses 1
  PiecewiseFit time_vs_row_length;  // Fig. 3: ms of a sample against c
  LinearFit time_vs_sample_nnz;     // Fig. 4: ms of a sample against its non-zeros, c >= threshold
  std::vector<SamplePoint> samples{};  // the measured (c, ms) the fits came from: for plots only
  friend bool operator==(const CsrVectorCalibration&, const CsrVectorCalibration&) = default;
};

// Fits both curves from samples of (row length c, ms): Fig. 3 over all of them, Fig. 4 over
// those at or above the fitted threshold with x = c * rows_per_sample. Keeps the samples. Throws
// Error(invalid_argument) as the fitters do, or when rows_per_sample or sample_strips <= 0.
CsrVectorCalibration fit_csr_vector(const CalibratedKernel& kernel,
                                    std::span<const SamplePoint> ms_vs_row_length,
                                    std::int64_t rows_per_sample, std::int64_t sample_strips = 1);

class CsrVectorModel final : public PerformanceModel {
 public:
  explicit CsrVectorModel(std::vector<CsrVectorCalibration> calibrations)
      : calibrations_(std::move(calibrations)) {}
  std::string_view family() const noexcept override { return "csr_vector"; }
  // O(distinct row lengths).
  Prediction predict_ms(const MatrixFeatures& features, const Candidate& candidate,
                        const DeviceInfo& device) const override;

  // The paper's "extend" step: a row of length c below the threshold counts as the length on
  // Fig. 3's line that takes as long as c does on the conic; never less than c.
  static double extended_row_length(const CsrVectorCalibration& calibration, double length);

 private:
  std::vector<CsrVectorCalibration> calibrations_;
};

}  // namespace spmvd
