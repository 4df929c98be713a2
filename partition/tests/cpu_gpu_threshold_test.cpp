#include "partition/cpu_gpu_threshold.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <iostream>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "partition/row_length_distribution.hpp"
#include "partition/tests/paper_000_example.hpp"

namespace spmvd {
namespace {

constexpr double kFreeCopies = std::numeric_limits<double>::infinity();

// Paper 000's 10 x 10 example: lengths 1, 2, 3, 4, 6, 7 with 2, 3, 2, 1, 1, 1 rows.
MatrixFeatures paper_example() {
  return distribution_features(row_length_distribution(testing::paper_000_row_offsets()), 10);
}

// T_gpu = ELL non-zeros, T_cpu = cpu_ms_per_nnz x COO non-zeros.
CpuGpuSplitCosts linear_costs(double cpu_ms_per_nnz, double bytes_per_ms) {
  return CpuGpuSplitCosts{
      .gpu_part_ms = [](const EllCooSplit& s) { return static_cast<double>(s.ell_nnz); },
      .cpu_part_ms =
          [cpu_ms_per_nnz](const EllCooSplit& s) {
            return cpu_ms_per_nnz * static_cast<double>(s.coo_nnz);
          },
      .host_device_bytes_per_ms = bytes_per_ms,
      .value_bytes = 8};
}

TEST(CpuGpuThreshold, BalancesThePaperExampleByHand) {
  // ELL / COO non-zeros by K: 1: 10/21, 2: 18/13, 3: 23/8, 4: 26/5. With T_cpu = 2 COO:
  // K = 2: max(18, 26) = 26; K = 3: max(23, 16) = 23, where the GPU side first overtakes.
  const CpuGpuSplitTime t =
      balanced_cpu_gpu_threshold(paper_example(), linear_costs(2.0, kFreeCopies));
  EXPECT_EQ(t.ell_width, 3);
  EXPECT_EQ(t.split.ell_nnz, 23);
  EXPECT_EQ(t.split.coo_nnz, 8);
  EXPECT_DOUBLE_EQ(t.gpu_ms, 23.0);
  EXPECT_DOUBLE_EQ(t.cpu_ms, 16.0);
  EXPECT_DOUBLE_EQ(t.total_ms, 23.0);
}

TEST(CpuGpuThreshold, CountsTheCopyOfXAndOfTheCpuPartOfY) {
  // 16 bytes/ms, fp64: x is 10 x 8 = 80 bytes -> 5 ms on the GPU side; at K = 3 three rows
  // overflow, 3 x (8 + 4) = 36 bytes of y -> 2.25 ms on the CPU side.
  const CpuGpuSplitTime t = cpu_gpu_split_time(paper_example(), 3, linear_costs(2.0, 16.0));
  EXPECT_EQ(t.split.coo_rows, 3);
  EXPECT_DOUBLE_EQ(t.gpu_ms, 23.0 + 5.0);
  EXPECT_DOUBLE_EQ(t.cpu_ms, 16.0 + 2.25);
  EXPECT_DOUBLE_EQ(t.total_ms, 28.0);
}

TEST(CpuGpuThreshold, AtTheLongestRowTheCpuHasNothingToCopy) {
  const CpuGpuSplitTime t = cpu_gpu_split_time(paper_example(), 7, linear_costs(2.0, 16.0));
  EXPECT_EQ(t.split.coo_nnz, 0);
  EXPECT_DOUBLE_EQ(t.cpu_ms, 0.0);
}

TEST(CpuGpuThreshold, PaperEquationsSixAndSevenPlugIn) {
  // nc = 3, fc = 4, C = 2, F = 5 (models/tests/analytic_time_model_test.cpp): K = 3 gives
  // TC = 2 x 8 / 4 / 2 = 2, TG = 23 / 10 = 2.3; K = 2: TC = 2 x 13 / 8 = 3.25, TG = 1.8.
  const CpuGpuTimeCoefficients c{.cpu_cores = 3,
                                 .cpu_operations_per_ms = 4,
                                 .gpu_streaming_processors = 2,
                                 .gpu_operations_per_ms_per_sp = 5};
  const CpuGpuSplitTime t =
      balanced_cpu_gpu_threshold(paper_example(), paper_003_split_costs(c, 1.0, kFreeCopies, 8));
  EXPECT_EQ(t.ell_width, 3);
  EXPECT_DOUBLE_EQ(t.cpu_ms, 2.0);
  EXPECT_DOUBLE_EQ(t.gpu_ms, 2.3);
}

TEST(CpuGpuThreshold, TheHostPartOfABandRunsAtTheBandedRatioOfTheRandomTime) {
  // As above, with the host's banded samples at half their random twins' time: at K = 3 a band
  // (x randomness 0) takes TC = 2 x 0.5, random columns (1) TC = 2, and halfway 2 x 0.75.
  CpuGpuTimeCoefficients c{.cpu_cores = 3,
                           .cpu_operations_per_ms = 4,
                           .gpu_streaming_processors = 2,
                           .gpu_operations_per_ms_per_sp = 5};
  c.cpu_banded_ratio = 0.5;
  for (const auto& [randomness, cpu_ms] :
       std::vector<std::pair<double, double>>{{0.0, 1.0}, {0.5, 1.5}, {1.0, 2.0}}) {
    const CpuGpuSplitTime t = cpu_gpu_split_time(
        paper_example(), 3, paper_003_split_costs(c, randomness, kFreeCopies, 8));
    EXPECT_DOUBLE_EQ(t.cpu_ms, cpu_ms) << "randomness " << randomness;
    EXPECT_DOUBLE_EQ(t.gpu_ms, 2.3) << "the GPU part has no host locality term";
  }
}

TEST(CpuGpuThreshold, MinimisesTheMaximumOverEveryKOnSyntheticCurves) {
  for (unsigned seed = 500; seed < 560; ++seed) {
    std::cout << "seed " << seed << "\n";
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937_64 rng(seed);
    // A power-law-ish DF: many short rows, a few long ones.
    std::vector<RowLengthCount> sets;
    std::int64_t length = 0;
    const auto count = static_cast<std::int64_t>(rng() % 30) + 1;
    for (std::int64_t i = 0; i < count; ++i) {
      length += static_cast<std::int64_t>(rng() % (i < 10 ? 3 : 200)) + 1;
      sets.push_back({length, std::max<std::int64_t>(1, 100'000 >> std::min<std::int64_t>(i, 16))});
    }
    RowLengthDistribution df;
    df.empty_rows = static_cast<std::int64_t>(rng() % 50);
    df.rows = df.empty_rows;
    for (const RowLengthCount& s : sets) {
      df.rows += s.rows;
      df.nnz += s.length * s.rows;
    }
    df.sets = sets;
    const MatrixFeatures f = distribution_features(df, 50'000);

    // GPU: ELL slots at one rate, plus a launch; CPU: COO non-zeros at another, rows apart.
    const double gpu_per_entry = 1e-6 * static_cast<double>(rng() % 100 + 1);
    const double cpu_per_nnz = 1e-5 * static_cast<double>(rng() % 100 + 1);
    const CpuGpuSplitCosts costs{
        .gpu_part_ms =
            [=](const EllCooSplit& s) {
              return 0.01 + gpu_per_entry * static_cast<double>(s.ell_entries);
            },
        .cpu_part_ms =
            [=](const EllCooSplit& s) {
              return cpu_per_nnz * static_cast<double>(s.coo_nnz) +
                     1e-6 * static_cast<double>(s.coo_rows);
            },
        .host_device_bytes_per_ms = 1e3 * static_cast<double>(rng() % 50'000 + 1),
        .copy_latency_ms = 0.002,
        .value_bytes = rng() % 2 == 0 ? 4 : 8};

    const CpuGpuSplitTime chosen = balanced_cpu_gpu_threshold(f, costs);
    double best = std::numeric_limits<double>::infinity();
    for (std::int64_t k = 1; k <= f.row_length_max; ++k) {
      best = std::min(best, cpu_gpu_split_time(f, k, costs).total_ms);
    }
    std::cout << "K " << chosen.ell_width << " of " << f.row_length_max << "\n";
    EXPECT_GE(chosen.ell_width, 1);
    EXPECT_LE(chosen.ell_width, f.row_length_max);
    EXPECT_EQ(chosen.total_ms, best);
  }
}

TEST(CpuGpuThreshold, RefusesABandwidthThatIsNotPositive) {
  try {
    cpu_gpu_split_time(paper_example(), 3, linear_costs(2.0, 0.0));
    FAIL() << "expected Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    EXPECT_STREQ(e.what(),
                 "cpu_gpu_split_time: host-device bandwidth 0.000000 bytes/ms is not positive");
  }
}

}  // namespace
}  // namespace spmvd
