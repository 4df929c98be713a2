#include "models/families/csr_vector/csr_vector_model.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/error.hpp"
#include "models/families/bytes/bytes_model.hpp"
#include "models/cache_resident.hpp"
#include "models/locality.hpp"

namespace spmvd {

CsrVectorCalibration fit_csr_vector(const CalibratedKernel& kernel,
                                    std::span<const SamplePoint> ms_vs_row_length,
                                    std::int64_t rows_per_sample, std::int64_t sample_strips) {
  if (rows_per_sample <= 0 || sample_strips <= 0) {
    throw_invalid("fit_csr_vector: rows_per_sample " + std::to_string(rows_per_sample) +
                  " and sample_strips " + std::to_string(sample_strips) + " must be positive");
  }
  CsrVectorCalibration c;
  c.kernel = kernel;
  c.sample_strips = sample_strips;
  c.samples.assign(ms_vs_row_length.begin(), ms_vs_row_length.end());
  std::stable_sort(c.samples.begin(), c.samples.end(),
                   [](const SamplePoint& l, const SamplePoint& r) { return l.x < r.x; });
  c.time_vs_row_length = fit_piecewise_conic_linear(ms_vs_row_length);
  // Fig. 4 uses only samples past the threshold ("the total number of non-zeros in the sample
  // matrix must be greater than a minimal value, which is calculated from the threshold").
  std::vector<SamplePoint> linear_part;
  for (const SamplePoint& s : ms_vs_row_length) {
    if (s.x >= c.time_vs_row_length.threshold_x) {
      linear_part.push_back({s.x * static_cast<double>(rows_per_sample), s.y});
    }
  }
  c.time_vs_sample_nnz = fit_linear(linear_part);
  return c;
}

SamplePoint csr_sample_at_rows(SamplePoint measured, std::int64_t rows, std::int64_t base_rows,
                               double fixed_ms) {
  if (rows <= 0 || base_rows <= 0)
    throw_invalid("csr_sample_at_rows: rows " + std::to_string(rows) + " and base rows " +
                  std::to_string(base_rows) + " must be positive");
  if (rows == base_rows) return measured;
  const double variable = std::max(measured.y - fixed_ms, 0.0);
  return {measured.x,
          fixed_ms + variable * static_cast<double>(base_rows) / static_cast<double>(rows)};
}

double CsrVectorModel::extended_row_length(const CsrVectorCalibration& calibration,
                                           double length) {
  const PiecewiseFit& fig3 = calibration.time_vs_row_length;
  if (length >= fig3.threshold_x || fig3.above.slope <= 0.0) return length;
  const double extended = (fig3.below(length) - fig3.above.intercept) / fig3.above.slope;
  return std::max(length, extended);
}

namespace {

// T(c) from the samples (at least two, ascending in c, with s.front().x < length), given the
// first sample at or beyond length (s.end() past the longest): piecewise linear between
// samples; beyond the longest sampled row, Fig. 3's line slope (time grows by a fixed cost per
// extra non-zero per row).
double interpolated_sample_ms(const CsrVectorCalibration& calibration, double length,
                              std::vector<SamplePoint>::const_iterator at_or_beyond) {
  const std::vector<SamplePoint>& s = calibration.samples;
  if (at_or_beyond != s.end()) {
    const SamplePoint& hi = *at_or_beyond;
    const SamplePoint& lo = *(at_or_beyond - 1);
    const double f = (length - lo.x) / (hi.x - lo.x);
    return lo.y + f * (hi.y - lo.y);
  }
  const PiecewiseFit& fig3 = calibration.time_vs_row_length;
  const SamplePoint& last = s.back();
  const SamplePoint& before = s[s.size() - 2];
  const double slope = fig3.above.slope > 0.0 ? fig3.above.slope
                                              : (last.y - before.y) / (last.x - before.x);
  return last.y + std::max(slope, 0.0) * (length - last.x);
}

// sample_ms_at for the ascending lengths of a DF: each search for the sample at or beyond a
// length starts where the last one stopped, so one prediction walks the samples once instead
// of searching them per set (the composed formats predict thousands of parts per matrix,
// bench/ranking-timing). The same segment, so bit for bit sample_ms_at; a shorter length than
// the last starts over.
class AscendingSampleLookup {
 public:
  explicit AscendingSampleLookup(const CsrVectorCalibration& calibration)
      : calibration_(calibration), next_(calibration.samples.begin() + 1) {}
  double operator()(double length) {
    const std::vector<SamplePoint>& s = calibration_.samples;
    if (s.size() < 2 || length <= s.front().x)
      return CsrVectorModel::sample_ms_at(calibration_, length);
    if ((next_ - 1)->x >= length) next_ = s.begin() + 1;
    while (next_ != s.end() && next_->x < length) ++next_;
    return interpolated_sample_ms(calibration_, length, next_);
  }

 private:
  const CsrVectorCalibration& calibration_;
  std::vector<SamplePoint>::const_iterator next_;  // every sample before it lies below length
};

}  // namespace

double CsrVectorModel::sample_ms_at(const CsrVectorCalibration& calibration, double length) {
  const std::vector<SamplePoint>& s = calibration.samples;
  if (s.size() < 2) return std::max(calibration.time_vs_row_length(length), 0.0);
  // The samples are sorted by c at fit time.
  if (length <= s.front().x) return s.front().y;
  return interpolated_sample_ms(
      calibration, length,
      std::lower_bound(s.begin() + 1, s.end(), length,
                       [](const SamplePoint& p, double c) { return p.x < c; }));
}

Prediction CsrVectorModel::predict_ms(const MatrixFeatures& features, const Candidate& candidate,
                                      const DeviceInfo& device) const {
  return predict_ms(features, candidate, device, x_gather_randomness(features));
}

double CsrVectorModel::critical_path_ms(const MatrixFeatures& features,
                                        const Candidate& candidate,
                                        const DeviceInfo& device) const {
  bool exact = false;
  const CsrVectorCalibration& cal =
      nearest_calibration(std::span<const CsrVectorCalibration>(calibrations_),
                          candidate.launch.block_size, candidate.launch.threads_per_row,
                          family(), exact);
  return critical_path_ms(cal, features, candidate, device);
}

double CsrVectorModel::critical_path_ms(const CsrVectorCalibration& cal,
                                        const MatrixFeatures& features,
                                        const Candidate& candidate,
                                        const DeviceInfo& device) const {
  if (!(cal.long_row_step_ms > 0.0)) return 0.0;
  const int threads_per_row = candidate.launch.threads_per_row != 0
                                  ? static_cast<int>(candidate.launch.threads_per_row)
                                  : cal.kernel.threads_per_row;
  const double steps = std::ceil(static_cast<double>(features.row_length_max) /
                                 static_cast<double>(std::max(threads_per_row, 1)));
  const double footprint =
      footprint_bytes(features, csr_storage_bytes_estimate(features, precision_), precision_);
  return cal.fixed_ms + critical_path_step_ms(cal.long_row_step_ms, cal.long_row_step_beyond_l2_ms,
                                              footprint, static_cast<double>(device.l2_bytes)) *
                            steps;
}

Prediction CsrVectorModel::predict_ms(const MatrixFeatures& features, const Candidate& candidate,
                                      const DeviceInfo& device, double randomness) const {
  bool exact = false;
  const CsrVectorCalibration& cal =
      nearest_calibration(std::span<const CsrVectorCalibration>(calibrations_),
                          candidate.launch.block_size, candidate.launch.threads_per_row,
                          family(), exact);
  KernelResources resources = cal.kernel.resources;
  if (candidate.launch.block_size != 0) {
    resources.threads_per_block = static_cast<int>(candidate.launch.block_size);
  }
  const Occupancy occupancy = compute_occupancy(resources, device);
  if (occupancy.active_blocks_per_sm == 0) {
    throw_invalid("csr_vector model: block size " + std::to_string(resources.threads_per_block) +
                  " cannot launch on " + device.name + " (limited by " +
                  std::string(to_string(occupancy.limit)) + ")");
  }

  // Rows of one calibration sample: sample_strips strips of one wave of resident row groups
  // (paper 004 Sec. 4.2), recomputed from the calibrated kernel as calibration planned them.
  const Occupancy cal_occupancy = compute_occupancy(cal.kernel.resources, device);
  const double sample_rows =
      static_cast<double>(cal.sample_strips) * static_cast<double>(device.sm_count) *
      static_cast<double>(std::max(cal_occupancy.active_blocks_per_sm, 1)) *
      static_cast<double>(cal.kernel.resources.threads_per_block) /
      static_cast<double>(std::max(cal.kernel.threads_per_row, 1));

  // Throughput term. Paper 004 Sec. 4.3.1 sums per-strip times from a line in strip non-zeros
  // (Fig. 4) whose intercept is charged once per strip. On Hopper that line is fitted over 2-4
  // long-row samples only and its intercept is often negative (fp64 scalar: -0.024 ms per strip),
  // which drove small matrices to 0 ms. Here each row of length c costs what one row of a
  // calibration sample of length c cost at full occupancy, T(c) / sample rows, with T
  // interpolated between the measured samples: the same additivity (Eq. (*)) without the
  // extrapolated intercept, and exact at every calibrated shape.
  // The fixed cost of a launch is in every sample's T(c) once, not per row: a sample of short
  // rows (a few hundred thousand non-zeros) is mostly that cost, and charging it per row would
  // make a 6M-row road network 2-3x slower than it is. It is taken out of the shares and
  // charged once.
  const double fixed_ms = cal.fixed_ms;
  AscendingSampleLookup sample_ms(cal);
  const auto row_ms = [&](std::int64_t length) {
    const double c = static_cast<double>(std::max<std::int64_t>(length, 1));
    return std::max(sample_ms(c) - fixed_ms, 0.0) / sample_rows;
  };
  double ms = static_cast<double>(features.empty_rows) * row_ms(1);
  for (const RowLengthCount& set : features.distribution)
    ms += static_cast<double>(set.rows) * row_ms(set.length);
  // x locality (models/locality.hpp): the samples have random columns; rho is read at the
  // mean row length. It scales the per-row shares only, so it is measured net of the fixed cost
  // (banded_ratio_net_of_fixed_cost): the short-row samples stream from DRAM, and a banded one
  // of ~1.5 L2s takes 25-35 us, of which the 4-5 us fixed cost is a sixth (H200, 2026-11-22,
  // spmv-calibrate: fp32 CSR scalar at 8 per row, 0.375 whole, 0.345 net; large fp32 stencils,
  // streaming at 90 % of the copy bandwidth, still come out 20-40 % slow in CSR scalar:
  // docs/MODELS.md "Known gaps"). The net ratio needs samples that stream from DRAM: with
  // samples inside L2 it overstated locality (CSR scalar's median error on the memory-bound
  // group 23 -> 53 %). The critical path below is a latency, not a gather volume: unscaled.
  ms *= locality_factor(cal.banded_ratio, features.row_length_mean, randomness);
  // Critical path: the longest row is summed by threads_per_row lanes in ceil(L / t) dependent
  // steps, however idle the rest of the GPU is; strip-wise estimation (which assumes the rows
  // of a strip finish together) misses this for matrices with a few very long rows.
  ms = std::max(ms + fixed_ms, critical_path_ms(cal, features, candidate, device));

  double confidence = (exact ? 0.8 : 0.5) * quality_factor(cal.time_vs_row_length.quality);
  if (static_cast<double>(features.row_length_max) > cal.time_vs_row_length.quality.x_max) {
    confidence *= 0.8;  // rows longer than any calibrated row: extrapolated
  }
  if (features.row_length_mean > 0.0 &&
      features.row_length_stddev > features.row_length_mean) {
    confidence *= 0.7;  // skewed rows: imbalance beyond the longest row is outside the model
  }
  return {.ms = std::max(ms, 0.0), .confidence = confidence, .includes_fixed_cost = fixed_ms > 0.0};
}

}  // namespace spmvd
