#include "models/fitting.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "core/error.hpp"

namespace spmvd {
namespace {

constexpr unsigned kSeed = 20240517;

std::vector<SamplePoint> sample(double (*f)(double), const std::vector<double>& xs) {
  std::vector<SamplePoint> points;
  for (double x : xs) points.push_back({x, f(x)});
  return points;
}

// Multiplies every y by (1 + e), e uniform in [-amplitude, amplitude], seeded.
void add_relative_noise(std::vector<SamplePoint>& points, double amplitude, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> noise(-amplitude, amplitude);
  for (SamplePoint& p : points) p.y *= 1.0 + noise(rng);
}

std::vector<double> range(double from, double to, double step) {
  std::vector<double> xs;
  for (double x = from; x <= to; x += step) xs.push_back(x);
  return xs;
}

TEST(Fitting, LinearFitRecoversExactCoefficients) {
  const auto points = sample([](double x) { return 0.005 + 2e-7 * x; }, range(1e3, 1e6, 1e4));
  const LinearFit fit = fit_linear(points);
  EXPECT_NEAR(fit.intercept, 0.005, 1e-12);
  EXPECT_NEAR(fit.slope, 2e-7, 1e-16);
  EXPECT_EQ(fit.quality.sample_count, points.size());
  EXPECT_LT(fit.quality.max_relative_error, 1e-10);
  EXPECT_EQ(fit.quality.x_min, 1e3);
  EXPECT_EQ(fit.quality.x_max, points.back().x);
}

TEST(Fitting, LinearFitWithSeededNoiseStaysWithinTolerance) {
  SCOPED_TRACE(testing::Message() << "seed " << kSeed);
  auto points = sample([](double x) { return 0.005 + 2e-7 * x; }, range(1e3, 1e6, 1e4));
  add_relative_noise(points, 0.02, kSeed);
  for (FitWeighting weighting : {FitWeighting::relative, FitWeighting::absolute}) {
    const LinearFit fit = fit_linear(points, weighting);
    EXPECT_NEAR(fit.intercept, 0.005, 0.0005);
    EXPECT_NEAR(fit.slope, 2e-7, 0.05 * 2e-7);
    EXPECT_LT(fit.quality.max_relative_error, 0.05);
    EXPECT_GT(fit.quality.rms_relative_error, 0.001);  // the noise shows in the residual
  }
}

TEST(Fitting, QuadraticFitRecoversExactCoefficientsOverWideRange) {
  const auto points =
      sample([](double x) { return 0.02 + 3e-4 * x + 5e-8 * x * x; }, range(1, 10001, 250));
  const QuadraticFit fit = fit_quadratic(points);
  EXPECT_NEAR(fit.c0, 0.02, 1e-9);
  EXPECT_NEAR(fit.c1, 3e-4, 1e-12);
  EXPECT_NEAR(fit.c2, 5e-8, 1e-15);
  EXPECT_LT(fit.quality.max_relative_error, 1e-9);
}

TEST(Fitting, QuadraticFitWithSeededNoiseStaysWithinTolerance) {
  SCOPED_TRACE(testing::Message() << "seed " << kSeed);
  auto points = sample([](double x) { return 1.0 + 0.1 * x + 0.01 * x * x; }, range(0, 100, 1));
  add_relative_noise(points, 0.01, kSeed);
  const QuadraticFit fit = fit_quadratic(points);
  EXPECT_NEAR(fit.c0, 1.0, 0.05);
  EXPECT_NEAR(fit.c1, 0.1, 0.01);
  EXPECT_NEAR(fit.c2, 0.01, 0.0005);
}

TEST(Fitting, LinearFitRefusesSamplesAtOneX) {
  const std::vector<SamplePoint> points{{5, 1.0}, {5, 1.1}};
  try {
    fit_linear(points);
    FAIL() << "expected Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    EXPECT_STREQ(e.what(), "fit_linear: needs samples at >= 2 distinct x, got 1 (2 samples)");
  }
}

TEST(Fitting, RefusesNonPositiveTimes) {
  const std::vector<SamplePoint> points{{1, 1.0}, {2, 0.0}, {3, 1.0}};
  try {
    fit_quadratic(points);
    FAIL() << "expected Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    EXPECT_STREQ(e.what(),
                 "fit_quadratic: sample 1 (x 2.000000, y 0.000000) must have finite x and a "
                 "positive finite y (a time)");
  }
}

// Paper 004 Fig. 3 shape: a flat-ish conic below 24 non-zeros per row, a line above.
double csr_shape(double x) {
  return x < 24 ? 0.010 + 0.0002 * x + 0.00001 * x * x : 0.004 + 0.0008 * x;
}

TEST(Fitting, PiecewiseFitRecoversTheBreakpointAndBothParts) {
  const auto points = sample(csr_shape, range(1, 96, 1));
  const PiecewiseFit fit = fit_piecewise_conic_linear(points);
  EXPECT_EQ(fit.threshold_x, 24.0);
  EXPECT_NEAR(fit.below.c0, 0.010, 1e-9);
  EXPECT_NEAR(fit.below.c1, 0.0002, 1e-10);
  EXPECT_NEAR(fit.below.c2, 0.00001, 1e-11);
  EXPECT_NEAR(fit.above.intercept, 0.004, 1e-9);
  EXPECT_NEAR(fit.above.slope, 0.0008, 1e-11);
  EXPECT_EQ(fit.quality.sample_count, points.size());
  EXPECT_EQ(fit.below.quality.sample_count, 23u);
  EXPECT_EQ(fit.above.quality.sample_count, 73u);
  EXPECT_LT(fit.quality.max_relative_error, 1e-9);
  EXPECT_NEAR(fit(10), csr_shape(10), 1e-12);
  EXPECT_NEAR(fit(50), csr_shape(50), 1e-12);
}

TEST(Fitting, PiecewiseFitFindsTheBreakpointUnderSeededNoise) {
  SCOPED_TRACE(testing::Message() << "seed " << kSeed);
  auto points = sample(csr_shape, range(1, 96, 1));
  add_relative_noise(points, 0.005, kSeed);
  const PiecewiseFit fit = fit_piecewise_conic_linear(points);
  EXPECT_NEAR(fit.threshold_x, 24.0, 2.0);
  EXPECT_NEAR(fit.above.slope, 0.0008, 0.00002);
  EXPECT_LT(fit.quality.rms_relative_error, 0.01);
}

TEST(Fitting, PiecewiseFitRefusesTooFewDistinctX) {
  const auto points = sample(csr_shape, {1, 2, 3, 4});
  EXPECT_THROW(fit_piecewise_conic_linear(points), Error);
}

std::vector<GridSample> ell_grid() {
  // log(ms) = -3 + 0.5 log(width) + 0.8 log(rows): bilinear in the logs, so interpolation is
  // exact everywhere inside.
  std::vector<GridSample> samples;
  for (double w : {1.0, 4.0, 16.0, 64.0}) {
    for (double r : {1e3, 1e4, 1e5}) {
      samples.push_back({w, r, std::exp(-3 + 0.5 * std::log(w) + 0.8 * std::log(r))});
    }
  }
  return samples;
}

TEST(Fitting, LogGridIsExactAtGridPoints) {
  const auto samples = ell_grid();
  const LogGridFit grid = fit_log_grid(samples);
  ASSERT_EQ(grid.widths, (std::vector<double>{1, 4, 16, 64}));
  ASSERT_EQ(grid.rows, (std::vector<double>{1e3, 1e4, 1e5}));
  for (const GridSample& s : samples) EXPECT_NEAR(grid(s.width, s.rows), s.ms, 1e-12 * s.ms);
  EXPECT_EQ(grid.quality.sample_count, 12u);
  EXPECT_LT(grid.quality.max_relative_error, 1e-12);
}

TEST(Fitting, LogGridIsLinearInTheLogsBetweenGridPoints) {
  const std::vector<GridSample> samples{{1, 100, 1.0}, {4, 100, 4.0}, {1, 400, 2.0},
                                        {4, 400, 16.0}};
  const LogGridFit grid = fit_log_grid(samples);
  // Halfway in log(width) at rows 100: exp((log 1 + log 4) / 2) = 2.
  EXPECT_NEAR(grid(2, 100), 2.0, 1e-12);
  // Centre of the cell: the mean of the four logs, exp((0 + log 4 + log 2 + log 16) / 4).
  EXPECT_NEAR(grid(2, 200), std::exp((std::log(4.0) + std::log(2.0) + std::log(16.0)) / 4), 1e-12);
  // A quarter of the way along log(rows) at width 4: exp(0.75 log 4 + 0.25 log 16).
  EXPECT_NEAR(grid(4, 100 * std::pow(4.0, 0.25)), std::exp(0.75 * std::log(4.0) + 0.25 * std::log(16.0)),
              1e-12);
}

TEST(Fitting, LogGridClampsOutsideTheGrid) {
  const LogGridFit grid = fit_log_grid(ell_grid());
  EXPECT_DOUBLE_EQ(grid(1000, 1e3), grid(64, 1e3));
  EXPECT_DOUBLE_EQ(grid(0.5, 1e9), grid(1, 1e5));
  EXPECT_FALSE(grid.covers(1000, 1e3));
  EXPECT_TRUE(grid.covers(10, 5e4));
}

TEST(Fitting, LogGridRefusesAMissingPair) {
  auto samples = ell_grid();
  samples.erase(samples.begin() + 4);  // width 4, rows 1e4
  try {
    fit_log_grid(samples);
    FAIL() << "expected Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    EXPECT_STREQ(e.what(),
                 "fit_log_grid: the grid has no sample at (width 4.000000, rows 10000.000000); "
                 "every width must be sampled at every row count");
  }
}

TEST(Fitting, LogGridRefusesARepeatedPair) {
  auto samples = ell_grid();
  samples.push_back(samples.front());
  EXPECT_THROW(fit_log_grid(samples), Error);
}

}  // namespace
}  // namespace spmvd
