#pragma once
// COO model of paper 004 Sec. 4.3.3: time linear in the number of non-zeros (Fig. 6).

#include <cstdint>
#include <vector>

#include "models/fitting.hpp"
#include "models/performance_model.hpp"

namespace spmvd {

struct CooCalibration {
  CalibratedKernel kernel;
  LinearFit time_vs_nnz;
  std::vector<SamplePoint> samples{};  // the measured (nnz, ms) the fit came from: for plots only
  // (nnz, T_banded / T_random) (models/locality.hpp); empty: no locality term.
  std::vector<SamplePoint> banded_ratio{};
  friend bool operator==(const CooCalibration&, const CooCalibration&) = default;
};

class CooModel final : public PerformanceModel {
 public:
  explicit CooModel(std::vector<CooCalibration> calibrations)
      : calibrations_(std::move(calibrations)) {}
  std::string_view family() const noexcept override { return "coo"; }
  Prediction predict_ms(const MatrixFeatures& features, const Candidate& candidate,
                        const DeviceInfo& device) const override;
  // The same for an explicit non-zero count: also the COO half of HYB. O(calibrations).
  // randomness: x_randomness of the matrix (models/locality.hpp); 1 = the random calibration.
  Prediction predict_nnz_ms(std::int64_t nnz, std::uint32_t block_size,
                            double randomness = 1.0) const;

 private:
  std::vector<CooCalibration> calibrations_;
};

}  // namespace spmvd
