#include "models/fitting.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>

#include "core/error.hpp"

namespace spmvd {
namespace {

std::size_t distinct_x_count(std::span<const SamplePoint> samples) {
  std::vector<double> xs;
  xs.reserve(samples.size());
  for (const SamplePoint& s : samples) xs.push_back(s.x);
  std::sort(xs.begin(), xs.end());
  return static_cast<std::size_t>(std::unique(xs.begin(), xs.end()) - xs.begin());
}

double weight_of(const SamplePoint& s, FitWeighting weighting) {
  return weighting == FitWeighting::relative ? 1.0 / s.y : 1.0;
}

// Weighted least squares for a polynomial of `terms` coefficients (1 + x + x^2 ...), by
// Householder QR of the column-scaled design matrix: the normal equations would square the
// condition number, which for x^2 over row lengths 1..10^4 is already 10^8.
std::vector<double> polynomial_least_squares(std::span<const SamplePoint> samples, int terms,
                                             FitWeighting weighting) {
  const std::size_t n = samples.size();
  const auto p = static_cast<std::size_t>(terms);
  std::vector<double> a(n * p);  // row-major n x p
  std::vector<double> b(n);
  for (std::size_t i = 0; i < n; ++i) {
    const double w = weight_of(samples[i], weighting);
    double power = 1.0;
    for (std::size_t j = 0; j < p; ++j) {
      a[i * p + j] = w * power;
      power *= samples[i].x;
    }
    b[i] = w * samples[i].y;
  }
  std::vector<double> scale(p, 0.0);
  for (std::size_t j = 0; j < p; ++j) {
    for (std::size_t i = 0; i < n; ++i) scale[j] = std::max(scale[j], std::abs(a[i * p + j]));
    if (scale[j] == 0.0) scale[j] = 1.0;
    for (std::size_t i = 0; i < n; ++i) a[i * p + j] /= scale[j];
  }
  // Householder: A = QR, apply Q^T to b as we go.
  for (std::size_t k = 0; k < p; ++k) {
    double norm = 0.0;
    for (std::size_t i = k; i < n; ++i) norm += a[i * p + k] * a[i * p + k];
    norm = std::sqrt(norm);
    if (norm == 0.0) continue;
    const double alpha = a[k * p + k] > 0 ? -norm : norm;
    std::vector<double> v(n - k);
    for (std::size_t i = k; i < n; ++i) v[i - k] = a[i * p + k];
    v[0] -= alpha;
    double vnorm2 = 0.0;
    for (double e : v) vnorm2 += e * e;
    if (vnorm2 == 0.0) continue;
    for (std::size_t j = k; j < p; ++j) {
      double dot = 0.0;
      for (std::size_t i = k; i < n; ++i) dot += v[i - k] * a[i * p + j];
      const double f = 2.0 * dot / vnorm2;
      for (std::size_t i = k; i < n; ++i) a[i * p + j] -= f * v[i - k];
    }
    double dot = 0.0;
    for (std::size_t i = k; i < n; ++i) dot += v[i - k] * b[i];
    const double f = 2.0 * dot / vnorm2;
    for (std::size_t i = k; i < n; ++i) b[i] -= f * v[i - k];
  }
  double max_diag = 0.0;
  for (std::size_t k = 0; k < p; ++k) max_diag = std::max(max_diag, std::abs(a[k * p + k]));
  std::vector<double> coef(p, 0.0);
  for (std::size_t k = p; k-- > 0;) {
    const double diag = a[k * p + k];
    if (std::abs(diag) <= 1e-13 * max_diag) {
      throw Error(ErrorCode::invalid_argument,
                  "polynomial least squares: the samples do not determine " +
                      std::to_string(terms) + " coefficients (rank-deficient design)");
    }
    double sum = b[k];
    for (std::size_t j = k + 1; j < p; ++j) sum -= a[k * p + j] * coef[j];
    coef[k] = sum / diag;
  }
  for (std::size_t j = 0; j < p; ++j) coef[j] /= scale[j];
  return coef;
}

void require_distinct(std::span<const SamplePoint> samples, std::size_t needed, const char* what) {
  const std::size_t distinct = distinct_x_count(samples);
  if (distinct < needed) {
    throw_invalid(std::string(what) + ": needs samples at >= " + std::to_string(needed) +
                  " distinct x, got " + std::to_string(distinct) + " (" +
                  std::to_string(samples.size()) + " samples)");
  }
}

template <typename Fit>
double weighted_squared_residual(std::span<const SamplePoint> samples, const Fit& f,
                                 FitWeighting weighting) {
  double sum = 0.0;
  for (const SamplePoint& s : samples) {
    const double r = (f(s.x) - s.y) * weight_of(s, weighting);
    sum += r * r;
  }
  return sum;
}

}  // namespace

void require_positive_times(std::span<const SamplePoint> samples, const char* what) {
  for (std::size_t i = 0; i < samples.size(); ++i) {
    if (!(samples[i].y > 0.0) || !std::isfinite(samples[i].y) || !std::isfinite(samples[i].x)) {
      throw_invalid(std::string(what) + ": sample " + std::to_string(i) + " (x " +
                    std::to_string(samples[i].x) + ", y " + std::to_string(samples[i].y) +
                    ") must have finite x and a positive finite y (a time)");
    }
  }
}

LinearFit fit_linear(std::span<const SamplePoint> samples, FitWeighting weighting) {
  require_positive_times(samples, "fit_linear");
  require_distinct(samples, 2, "fit_linear");
  const std::vector<double> c = polynomial_least_squares(samples, 2, weighting);
  LinearFit fit{.intercept = c[0], .slope = c[1], .quality = {}};
  fit.quality = measure_quality(samples, fit);
  return fit;
}

QuadraticFit fit_quadratic(std::span<const SamplePoint> samples, FitWeighting weighting) {
  require_positive_times(samples, "fit_quadratic");
  require_distinct(samples, 3, "fit_quadratic");
  const std::vector<double> c = polynomial_least_squares(samples, 3, weighting);
  QuadraticFit fit{.c0 = c[0], .c1 = c[1], .c2 = c[2], .quality = {}};
  fit.quality = measure_quality(samples, fit);
  return fit;
}

PiecewiseFit fit_piecewise_conic_linear(std::span<const SamplePoint> samples,
                                        FitWeighting weighting, std::size_t min_conic_points,
                                        std::size_t min_linear_points) {
  require_positive_times(samples, "fit_piecewise_conic_linear");
  if (min_conic_points < 3 || min_linear_points < 2) {
    throw_invalid("fit_piecewise_conic_linear: min_conic_points " +
                  std::to_string(min_conic_points) + " must be >= 3 and min_linear_points " +
                  std::to_string(min_linear_points) + " >= 2");
  }
  std::vector<SamplePoint> sorted(samples.begin(), samples.end());
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const SamplePoint& l, const SamplePoint& r) { return l.x < r.x; });
  std::vector<double> distinct;
  for (const SamplePoint& s : sorted) {
    if (distinct.empty() || distinct.back() != s.x) distinct.push_back(s.x);
  }
  if (distinct.size() < min_conic_points + min_linear_points) {
    throw_invalid("fit_piecewise_conic_linear: needs samples at >= " +
                  std::to_string(min_conic_points + min_linear_points) + " distinct x, got " +
                  std::to_string(distinct.size()));
  }
  double total_weighted_y2 = 0.0;
  for (const SamplePoint& s : sorted) {
    const double wy = s.y * weight_of(s, weighting);
    total_weighted_y2 += wy * wy;
  }
  // A candidate must beat the best so far by more than rounding noise to replace it, so that on
  // exact data the lowest exact threshold wins rather than the luckiest rounding.
  const double tie_tolerance = 1e-20 * total_weighted_y2;

  PiecewiseFit best;
  double best_residual = std::numeric_limits<double>::infinity();
  for (std::size_t t = min_conic_points; t + min_linear_points <= distinct.size(); ++t) {
    const double threshold = distinct[t];
    const auto split = std::lower_bound(
        sorted.begin(), sorted.end(), threshold,
        [](const SamplePoint& s, double x) { return s.x < x; });
    const std::span<const SamplePoint> below(sorted.data(), split - sorted.begin());
    const std::span<const SamplePoint> above(sorted.data() + (split - sorted.begin()),
                                             sorted.end() - split);
    const std::vector<double> q = polynomial_least_squares(below, 3, weighting);
    const std::vector<double> l = polynomial_least_squares(above, 2, weighting);
    const QuadraticFit conic{.c0 = q[0], .c1 = q[1], .c2 = q[2], .quality = {}};
    const LinearFit line{.intercept = l[0], .slope = l[1], .quality = {}};
    const double residual = weighted_squared_residual(below, conic, weighting) +
                            weighted_squared_residual(above, line, weighting);
    if (residual < best_residual - tie_tolerance) {
      best_residual = residual;
      best.threshold_x = threshold;
      best.below = conic;
      best.above = line;
      best.below.quality = measure_quality(below, conic);
      best.above.quality = measure_quality(above, line);
    }
  }
  best.quality = measure_quality(std::span<const SamplePoint>(sorted), best);
  return best;
}

LogGridFit fit_log_grid(std::span<const GridSample> samples) {
  if (samples.empty()) throw_invalid("fit_log_grid: no samples");
  LogGridFit grid;
  for (std::size_t i = 0; i < samples.size(); ++i) {
    const GridSample& s = samples[i];
    if (!(s.width > 0.0) || !(s.rows > 0.0) || !(s.ms > 0.0) || !std::isfinite(s.ms) ||
        !std::isfinite(s.width) || !std::isfinite(s.rows)) {
      throw_invalid("fit_log_grid: sample " + std::to_string(i) + " (width " +
                    std::to_string(s.width) + ", rows " + std::to_string(s.rows) + ", ms " +
                    std::to_string(s.ms) + ") must have positive finite width, rows and ms");
    }
    grid.widths.push_back(s.width);
    grid.rows.push_back(s.rows);
  }
  for (std::vector<double>* axis : {&grid.widths, &grid.rows}) {
    std::sort(axis->begin(), axis->end());
    axis->erase(std::unique(axis->begin(), axis->end()), axis->end());
  }
  const std::size_t nw = grid.widths.size();
  const std::size_t nr = grid.rows.size();
  grid.log_ms.assign(nw * nr, std::numeric_limits<double>::quiet_NaN());
  std::vector<bool> seen(nw * nr, false);
  for (const GridSample& s : samples) {
    const auto w = static_cast<std::size_t>(
        std::lower_bound(grid.widths.begin(), grid.widths.end(), s.width) - grid.widths.begin());
    const auto r = static_cast<std::size_t>(
        std::lower_bound(grid.rows.begin(), grid.rows.end(), s.rows) - grid.rows.begin());
    if (seen[r * nw + w]) {
      throw_invalid("fit_log_grid: (width " + std::to_string(s.width) + ", rows " +
                    std::to_string(s.rows) + ") is sampled more than once");
    }
    seen[r * nw + w] = true;
    grid.log_ms[r * nw + w] = std::log(s.ms);
  }
  for (std::size_t r = 0; r < nr; ++r) {
    for (std::size_t w = 0; w < nw; ++w) {
      if (!seen[r * nw + w]) {
        throw_invalid("fit_log_grid: the grid has no sample at (width " +
                      std::to_string(grid.widths[w]) + ", rows " + std::to_string(grid.rows[r]) +
                      "); every width must be sampled at every row count");
      }
    }
  }
  // Quality over the samples: the interpolation passes through them, so this checks the grid
  // bookkeeping rather than the model; it also records the sampled width range.
  double sum_squares = 0.0;
  grid.quality.sample_count = samples.size();
  for (const GridSample& s : samples) {
    const double e = (grid(s.width, s.rows) - s.ms) / s.ms;
    sum_squares += e * e;
    grid.quality.max_relative_error = std::max(grid.quality.max_relative_error, std::abs(e));
  }
  grid.quality.rms_relative_error = std::sqrt(sum_squares / static_cast<double>(samples.size()));
  grid.quality.x_min = grid.widths.front();
  grid.quality.x_max = grid.widths.back();
  return grid;
}

namespace {

// Index i and fraction f such that log(value) lies at (1 - f) * axis[i] + f * axis[i + 1] in
// log space, clamped to the axis ends.
std::pair<std::size_t, double> locate(const std::vector<double>& axis, double value) {
  if (axis.size() == 1 || value <= axis.front()) return {0, 0.0};
  if (value >= axis.back()) return {axis.size() - 2, 1.0};
  const auto upper = static_cast<std::size_t>(
      std::upper_bound(axis.begin(), axis.end(), value) - axis.begin());
  const std::size_t i = upper - 1;
  const double f =
      (std::log(value) - std::log(axis[i])) / (std::log(axis[i + 1]) - std::log(axis[i]));
  return {i, f};
}

}  // namespace

double LogGridFit::operator()(double width, double row_count) const {
  if (widths.empty() || rows.empty() || log_ms.size() != widths.size() * rows.size()) {
    throw Error(ErrorCode::failed_precondition,
                "LogGridFit: the grid is empty or its log_ms size does not match widths x rows");
  }
  if (!(width > 0.0) || !(row_count > 0.0)) {
    throw_invalid("LogGridFit: width " + std::to_string(width) + " and rows " +
                  std::to_string(row_count) + " must be positive");
  }
  const std::size_t nw = widths.size();
  const auto [w, fw] = locate(widths, width);
  const auto [r, fr] = locate(rows, row_count);
  const auto at = [&](std::size_t ri, std::size_t wi) {
    return log_ms[std::min(ri, rows.size() - 1) * nw + std::min(wi, nw - 1)];
  };
  const double low = (1.0 - fw) * at(r, w) + fw * at(r, w + 1);
  const double high = (1.0 - fw) * at(r + 1, w) + fw * at(r + 1, w + 1);
  return std::exp((1.0 - fr) * low + fr * high);
}

bool LogGridFit::covers(double width, double row_count) const noexcept {
  return !widths.empty() && !rows.empty() && width >= widths.front() &&
         width <= widths.back() && row_count >= rows.front() && row_count <= rows.back();
}

}  // namespace spmvd
