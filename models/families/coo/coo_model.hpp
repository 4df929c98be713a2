#pragma once
// COO model of paper 004 Sec. 4.3.3: time linear in the number of non-zeros (Fig. 6), one line
// per entries per thread E. cuda_coo's launch carries E in its grid (grid = nnz / (block * E)):
// each warp reduces 32 E entries in E dependent steps, and there are nnz / 32 E warps, whatever
// the block size. So E, not the block, sets the time: at E = 32 a cache-resident matrix takes
// 25-35 us on the H200, at E = 2 10-12 us; a line calibrated at one E cannot tell them apart.

#include <tuple>
#include <cstdint>
#include <vector>

#include "core/field_set.hpp"
#include "core/launch_config.hpp"
#include "models/fitting.hpp"
#include "models/performance_model.hpp"

namespace spmvd {

// Entries in every row of the COO calibration samples (CalibrationOptions::coo_row_length):
// what the COO fit's row writes hold (models/families/coo/row_writes.hpp).
inline constexpr std::int64_t kCooSampleRowLength = 8;

struct CooCalibration {
  CalibratedKernel kernel;
  std::uint32_t entries_per_thread = 0;  // E of the calibrated launch; 0: none (the CPU's COO)
  LinearFit time_vs_nnz;
  std::vector<SamplePoint> samples{};  // the measured (nnz, ms) the fit came from: for plots only
  // (nnz, T_banded / T_random) (models/locality.hpp); empty: no locality term.
  std::vector<SamplePoint> banded_ratio{};
  static constexpr auto kFields = std::tuple{
      declare_field("kernel", &CooCalibration::kernel),
      declare_field("entries_per_thread", &CooCalibration::entries_per_thread),
      declare_field("time_vs_nnz", &CooCalibration::time_vs_nnz),
      declare_field("samples", &CooCalibration::samples),
      declare_field("banded_ratio", &CooCalibration::banded_ratio)};
  friend bool operator==(const CooCalibration&, const CooCalibration&) = default;
};

// Entries per thread of a cuda_coo launch over nnz entries: nnz / (block * grid), at least 1;
// 0 where the launch has no grid (the CPU's COO).
double coo_entries_per_thread(std::int64_t nnz, const LaunchConfig& launch) noexcept;

class CooModel {
 public:
  explicit CooModel(std::vector<CooCalibration> calibrations)
      : calibrations_(std::move(calibrations)) {}
  std::string_view family() const noexcept { return "coo"; }
  Prediction predict_ms(const MatrixFeatures& features, const Candidate& candidate,
                        const DeviceInfo& device) const;
  // The same for an explicit non-zero count and launch: also the COO half of HYB. The record
  // of the nearest E (coo_entries_per_thread), then block size. O(calibrations).
  // randomness: x_gather_randomness of the matrix (models/locality.hpp); 1 = the random
  // calibration.
  Prediction predict_nnz_ms(std::int64_t nnz, const LaunchConfig& launch,
                            double randomness = 1.0) const;

 private:
  std::vector<CooCalibration> calibrations_;
};

}  // namespace spmvd
