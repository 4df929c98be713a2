#pragma once
// Least-squares fits of calibration samples for the empirical models of paper 004 (Sec. 4.3):
// a line (COO, Fig. 6; CSR strips, Fig. 4), a conic (quadratic), the CSR-vector piecewise fit
// (conic below a row-length threshold, line above, Fig. 3) and the ELL 2-D interpolation in
// log(width) x log(rows) (Fig. 5). Calibration code only produces sample points and calls these.
//
// Every fit reports its quality over the samples it was fitted to. Samples are times, so y must
// be positive (relative errors are defined); a violation throws Error(invalid_argument) naming
// the sample. All functions are pure and thread-safe.

#include <tuple>
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <span>
#include <vector>

#include "core/field_set.hpp"

namespace spmvd {

struct SamplePoint {
  double x = 0.0;
  double y = 0.0;  // a time in ms, > 0
  friend bool operator==(const SamplePoint&, const SamplePoint&) = default;
};

// How well a fit reproduces its samples: relative errors |fit(x) - y| / y.
struct FitQuality {
  std::size_t sample_count = 0;
  double rms_relative_error = 0.0;
  double max_relative_error = 0.0;
  double x_min = 0.0;  // the sampled range: predictions outside it extrapolate
  double x_max = 0.0;
  static constexpr auto kFields = std::tuple{
      declare_field("sample_count", &FitQuality::sample_count),
      declare_field("rms_relative_error", &FitQuality::rms_relative_error),
      declare_field("max_relative_error", &FitQuality::max_relative_error),
      declare_field("x_min", &FitQuality::x_min),
      declare_field("x_max", &FitQuality::x_max)};
  friend bool operator==(const FitQuality&, const FitQuality&) = default;
};

// Relative weighting minimises sum ((fit - y) / y)^2: calibration times span decades, and with
// absolute weighting the largest samples would decide the fit alone.
enum class FitWeighting { relative, absolute };

// y = intercept + slope * x
struct LinearFit {
  double intercept = 0.0;
  double slope = 0.0;
  FitQuality quality;
  double operator()(double x) const noexcept { return intercept + slope * x; }
  static constexpr auto kFields = std::tuple{
      declare_field("intercept", &LinearFit::intercept),
      declare_field("slope", &LinearFit::slope),
      declare_field("quality", &LinearFit::quality)};
  friend bool operator==(const LinearFit&, const LinearFit&) = default;
};

// y = c0 + c1 * x + c2 * x^2 (the "conic curve" of paper 004 Sec. 4.3.1)
struct QuadraticFit {
  double c0 = 0.0;
  double c1 = 0.0;
  double c2 = 0.0;
  FitQuality quality;
  double operator()(double x) const noexcept { return c0 + (c1 + c2 * x) * x; }
  static constexpr auto kFields = std::tuple{
      declare_field("c0", &QuadraticFit::c0),
      declare_field("c1", &QuadraticFit::c1),
      declare_field("c2", &QuadraticFit::c2),
      declare_field("quality", &QuadraticFit::quality)};
  friend bool operator==(const QuadraticFit&, const QuadraticFit&) = default;
};

// Paper 004 Sec. 4.3.1, Fig. 3: below(x) for x < threshold_x, above(x) for x >= threshold_x.
// threshold_x is the smallest sampled x of the linear part.
struct PiecewiseFit {
  double threshold_x = 0.0;
  QuadraticFit below;
  LinearFit above;
  FitQuality quality;  // over all samples
  double operator()(double x) const noexcept { return x < threshold_x ? below(x) : above(x); }
  static constexpr auto kFields = std::tuple{
      declare_field("threshold_x", &PiecewiseFit::threshold_x),
      declare_field("below", &PiecewiseFit::below),
      declare_field("above", &PiecewiseFit::above),
      declare_field("quality", &PiecewiseFit::quality)};
  friend bool operator==(const PiecewiseFit&, const PiecewiseFit&) = default;
};

// One ELL calibration measurement: `rows` rows of `width` entries each took `ms`.
struct GridSample {
  double width = 0.0;
  double rows = 0.0;
  double ms = 0.0;
  friend bool operator==(const GridSample&, const GridSample&) = default;
};

// Paper 004 Sec. 4.3.2, Fig. 5: log(ms) on a full grid of log(width) x log(rows), bilinear
// between grid points and clamped to the grid's edge outside it. (The paper takes the nearest
// grid point; bilinear is exact at the grid points and continuous between them.)
struct LogGridFit {
  std::vector<double> widths;  // ascending, > 0
  std::vector<double> rows;    // ascending, > 0
  std::vector<double> log_ms;  // log_ms[r * widths.size() + w] for (widths[w], rows[r])
  FitQuality quality;          // x_min/x_max: width range; row range is rows.front()/back()
  // exp of the bilinear interpolation of log_ms at (log width, log rows), each clamped to the
  // grid. width and rows must be > 0. O(log grid size).
  double operator()(double width, double rows) const;
  bool covers(double width, double rows) const noexcept;
  static constexpr auto kFields = std::tuple{
      declare_field("widths", &LogGridFit::widths),
      declare_field("rows", &LogGridFit::rows),
      declare_field("log_ms", &LogGridFit::log_ms),
      declare_field("quality", &LogGridFit::quality)};
  friend bool operator==(const LogGridFit&, const LogGridFit&) = default;
};

// Needs samples at >= 2 distinct x; throws Error(invalid_argument) otherwise.
LinearFit fit_linear(std::span<const SamplePoint> samples,
                     FitWeighting weighting = FitWeighting::relative);
// Needs samples at >= 3 distinct x.
QuadraticFit fit_quadratic(std::span<const SamplePoint> samples,
                           FitWeighting weighting = FitWeighting::relative);
// Tries every sampled x as the threshold (at least min_conic_points distinct x below it and
// min_linear_points distinct x at or above it) and keeps the one with the least weighted squared
// residual over both parts; on a tie the lower threshold (the longer linear part) wins.
// O(distinct x * samples). Throws Error(invalid_argument) when no threshold leaves enough points
// on both sides or min_conic_points < 3 or min_linear_points < 2.
PiecewiseFit fit_piecewise_conic_linear(std::span<const SamplePoint> samples,
                                        FitWeighting weighting = FitWeighting::relative,
                                        std::size_t min_conic_points = 3,
                                        std::size_t min_linear_points = 2);
// Needs exactly one sample for every (width, rows) pair of the distinct widths x distinct rows,
// all values > 0; throws Error(invalid_argument) naming a missing or repeated pair.
LogGridFit fit_log_grid(std::span<const GridSample> samples);

// y at x on points sorted by x (> 0): linear in log x between neighbours, the end values beyond
// them. points must not be empty. (BSR's block-row ratio, the host's x-width ratio.) Inline:
// spmvd_model_formulas (the host's time model) does not link the fits.
inline double interpolate_in_log_x(std::span<const SamplePoint> points, double x) noexcept {
  if (x <= points.front().x) return points.front().y;
  for (std::size_t i = 1; i < points.size(); ++i) {
    const SamplePoint& a = points[i - 1];
    const SamplePoint& b = points[i];
    if (x > b.x) continue;
    if (!(b.x > a.x) || !(a.x > 0.0)) return b.y;
    return a.y + (b.y - a.y) * (std::log(x / a.x) / std::log(b.x / a.x));
  }
  return points.back().y;
}

// Throws Error(invalid_argument) naming `what` and the first sample with y <= 0 or non-finite.
void require_positive_times(std::span<const SamplePoint> samples, const char* what);

// Quality of any fit f over samples (f(x) vs y). Throws Error(invalid_argument) on y <= 0.
template <typename Fit>
FitQuality measure_quality(std::span<const SamplePoint> samples, const Fit& f) {
  require_positive_times(samples, "measure_quality");
  FitQuality q;
  q.sample_count = samples.size();
  if (samples.empty()) return q;
  double sum_squares = 0.0;
  q.x_min = q.x_max = samples.front().x;
  for (const SamplePoint& s : samples) {
    const double e = (f(s.x) - s.y) / s.y;
    sum_squares += e * e;
    q.max_relative_error = std::max(q.max_relative_error, std::abs(e));
    q.x_min = std::min(q.x_min, s.x);
    q.x_max = std::max(q.x_max, s.x);
  }
  q.rms_relative_error = std::sqrt(sum_squares / static_cast<double>(samples.size()));
  return q;
}

}  // namespace spmvd
