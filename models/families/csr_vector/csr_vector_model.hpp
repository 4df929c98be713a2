#pragma once
// CSR-vector model of paper 004 Sec. 4.3.1: strip-wise estimation from a piecewise fit of time
// against row length (Fig. 3) and a linear fit of time against strip non-zeros (Fig. 4).

#include <tuple>
#include <cstdint>
#include <span>
#include <vector>

#include "core/field_set.hpp"
#include "core/precision.hpp"
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
  // The measured (c, ms) the fits came from, ascending in c: the throughput term interpolates
  // them (sample_ms_at), the plots draw them.
  std::vector<SamplePoint> samples{};
  // ms per step of one lane group along a single long row (the latency-bound critical path of a
  // row of length L: ceil(L / threads_per_row) steps), from the latency stage's long-row pairs:
  // in a sample that stays in L2, and in one beyond it (models/cache_resident.hpp
  // critical_path_step_ms picks by footprint); 0: not calibrated, no critical-path term / the
  // in-L2 step everywhere.
  double long_row_step_ms = 0.0;
  double long_row_step_beyond_l2_ms = 0.0;
  // ms of the variant's threads_per_row on the latency stage's tiny sample: what every launch
  // costs however few rows it has (launch, the first wave's memory latency, completion). The
  // per-row share of a sample is taken net of it and it is charged once per prediction; 0: not
  // calibrated, the shares keep it.
  double fixed_ms = 0.0;
  // (c, T_banded(c) / T_random(c)) of the banded twins of some samples (models/locality.hpp);
  // empty: no locality term.
  std::vector<SamplePoint> banded_ratio{};
  static constexpr auto kFields = std::tuple{
      declare_field("kernel", &CsrVectorCalibration::kernel),
      declare_field("sample_strips", &CsrVectorCalibration::sample_strips),
      declare_field("time_vs_row_length", &CsrVectorCalibration::time_vs_row_length),
      declare_field("time_vs_sample_nnz", &CsrVectorCalibration::time_vs_sample_nnz),
      declare_field("samples", &CsrVectorCalibration::samples),
      declare_field("long_row_step_ms", &CsrVectorCalibration::long_row_step_ms),
      declare_field("long_row_step_beyond_l2_ms", &CsrVectorCalibration::long_row_step_beyond_l2_ms),
      declare_field("fixed_ms", &CsrVectorCalibration::fixed_ms),
      declare_field("banded_ratio", &CsrVectorCalibration::banded_ratio)};
  friend bool operator==(const CsrVectorCalibration&, const CsrVectorCalibration&) = default;
};
// After reading (models/fit_json.hpp): the samples in ascending row length, the order the
// throughput term interpolates them in.
void check_record(CsrVectorCalibration& v);

// Prediction (see csr_vector_model.cpp): the fixed cost plus the sum over row groups of
// (T(c) - fixed) / sample rows, at least the critical path of the longest row. Fits both
// curves from samples of (row length c, ms): Fig. 3 over all of them, Fig. 4 over those at or
// above the fitted threshold with x = c * rows_per_sample. Keeps the samples. Throws
// Error(invalid_argument) as the fitters do, or when rows_per_sample or sample_strips <= 0.
CsrVectorCalibration fit_csr_vector(const CalibratedKernel& kernel,
                                    std::span<const SamplePoint> ms_vs_row_length,
                                    std::int64_t rows_per_sample, std::int64_t sample_strips = 1);

// A sample (c, ms) of `rows` rows as a sample of base_rows rows would take, both streaming
// from DRAM: the launch's fixed cost once, the rest in proportion to the rows (calibration
// times short-row samples on more rows than the others, so that they do not fit in L2).
SamplePoint csr_sample_at_rows(SamplePoint measured, std::int64_t rows, std::int64_t base_rows,
                               double fixed_ms);

class CsrVectorModel {
 public:
  // precision: of the calibrations, for the matrix's footprint (which critical-path step).
  CsrVectorModel(std::vector<CsrVectorCalibration> calibrations, Precision precision)
      : calibrations_(std::move(calibrations)), precision_(precision) {}
  std::string_view family() const noexcept { return "csr_vector"; }
  // O(distinct row lengths). At the matrix's x_gather_randomness (models/locality.hpp).
  Prediction predict_ms(const MatrixFeatures& features, const Candidate& candidate,
                        const DeviceInfo& device) const;
  // The same at an explicit x randomness (1 = the random calibration samples).
  Prediction predict_ms(const MatrixFeatures& features, const Candidate& candidate,
                        const DeviceInfo& device, double randomness) const;

  // The launch's fixed cost plus the longest row's ceil(L / t) dependent steps (the
  // calibrated step at the matrix's footprint, critical_path_step_ms): what the candidate takes
  // however idle the rest of the GPU is. 0 where no step is calibrated. predict_ms never goes
  // below it; ModelPredictor holds the cache-resident correction above it too.
  double critical_path_ms(const MatrixFeatures& features, const Candidate& candidate,
                          const DeviceInfo& device) const;

  // The paper's "extend" step: a row of length c below the threshold counts as the length on
  // Fig. 3's line that takes as long as c does on the conic; never less than c.
  static double extended_row_length(const CsrVectorCalibration& calibration, double length);
  // Time of one calibration sample of row length `length`: linear between the measured samples,
  // Fig. 3's line slope past the longest, the Fig. 3 fit where the samples were not kept.
  static double sample_ms_at(const CsrVectorCalibration& calibration, double length);

 private:
  // critical_path_ms with the candidate's calibration already chosen.
  double critical_path_ms(const CsrVectorCalibration& cal, const MatrixFeatures& features,
                          const Candidate& candidate, const DeviceInfo& device) const;
  std::vector<CsrVectorCalibration> calibrations_;
  Precision precision_;
};

}  // namespace spmvd
