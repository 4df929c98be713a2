#include "models/csr_vector_model.hpp"

#include <algorithm>
#include <string>

#include "core/error.hpp"

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

double CsrVectorModel::extended_row_length(const CsrVectorCalibration& calibration,
                                           double length) {
  const PiecewiseFit& fig3 = calibration.time_vs_row_length;
  if (length >= fig3.threshold_x || fig3.above.slope <= 0.0) return length;
  const double extended = (fig3.below(length) - fig3.above.intercept) / fig3.above.slope;
  return std::max(length, extended);
}

Prediction CsrVectorModel::predict_ms(const MatrixFeatures& features, const Candidate& candidate,
                                      const DeviceInfo& device) const {
  bool exact = false;
  const CsrVectorCalibration& cal =
      nearest_calibration(std::span<const CsrVectorCalibration>(calibrations_),
                          candidate.launch.block_size, candidate.launch.threads_per_row,
                          family(), exact);
  KernelResources resources = cal.kernel.resources;
  if (candidate.launch.block_size != 0) {
    resources.threads_per_block = static_cast<int>(candidate.launch.block_size);
  }
  const int threads_per_row = candidate.launch.threads_per_row != 0
                                  ? static_cast<int>(candidate.launch.threads_per_row)
                                  : cal.kernel.threads_per_row;

  // Paper 004 Sec. 4.2: strips are the rows one wave of resident blocks covers; I strips.
  // launch.grid_size is not used: a grid-stride launch moves through the rows in the same
  // waves of resident warps, which is what the strip count stands for.
  const Occupancy occupancy = compute_occupancy(resources, device);
  if (occupancy.active_blocks_per_sm == 0) {
    throw_invalid("csr_vector model: block size " + std::to_string(resources.threads_per_block) +
                  " cannot launch on " + device.name + " (limited by " +
                  std::string(to_string(occupancy.limit)) + ")");
  }
  const std::int64_t strips = iterations(
      thread_blocks_for_rows(features.rows, threads_per_row, resources.threads_per_block),
      occupancy, device);

  // Extend and count (Sec. 4.3.1). The strip times sum to I * intercept + slope * (extended
  // non-zeros of the whole matrix), because Fig. 4 is linear in a strip's non-zeros and each row
  // is extended on its own. So only the DF is needed, whatever the row order: the paper's sorted
  // rows and an unsorted matrix predict the same. What this does not see is imbalance inside a
  // strip (one very long row holding its block while the others idle); the confidence drops
  // for skewed distributions instead.
  double extended_nnz =
      static_cast<double>(features.empty_rows) * extended_row_length(cal, 0.0);
  for (const RowLengthCount& set : features.distribution) {
    extended_nnz +=
        static_cast<double>(set.rows) * extended_row_length(cal, static_cast<double>(set.length));
  }
  const LinearFit& fig4 = cal.time_vs_sample_nnz;
  const double per_strip_intercept_ms = fig4.intercept / static_cast<double>(cal.sample_strips);
  const double ms = static_cast<double>(strips) * per_strip_intercept_ms + fig4.slope * extended_nnz;

  double confidence = (exact ? 0.8 : 0.5) * quality_factor(fig4.quality);
  if (static_cast<double>(features.row_length_max) > cal.time_vs_row_length.quality.x_max) {
    confidence *= 0.8;  // rows longer than any calibrated row: Fig. 3 extrapolated
  }
  if (features.row_length_mean > 0.0 &&
      features.row_length_stddev > features.row_length_mean) {
    confidence *= 0.7;  // skewed rows: intra-strip imbalance is outside the model
  }
  return {.ms = std::max(ms, 0.0), .confidence = confidence};
}

}  // namespace spmvd
