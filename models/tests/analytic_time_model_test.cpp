#include <gtest/gtest.h>

#include <vector>

#include "core/error.hpp"
#include "models/blocked_ell_time_model.hpp"
#include "models/families/cpu_gpu/cpu_gpu_time_model.hpp"

namespace spmvd {
namespace {

// The 10 x 10 example of paper 000 Sec. 5.1: b = [2, 3, 2, 1, 0, 1, 1] for lengths 1..7.
MatrixFeatures paper_000_example() {
  MatrixFeatures f;
  f.rows = 10;
  f.cols = 10;
  f.nnz = 31;
  f.row_length_min = 1;
  f.row_length_max = 7;
  f.distribution = {{1, 2}, {2, 3}, {3, 2}, {4, 1}, {6, 1}, {7, 1}};
  return f;
}

TEST(BlockedEllTimeModel, PartitionsTheDfByUpperRowLengths) {
  const std::vector<std::int64_t> bounds{2, 4, 7};
  const auto parts = partitions_from_bounds(paper_000_example(), bounds);
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[0], (RowVectorPartition{.rows = 5, .width = 2}));
  EXPECT_EQ(parts[1], (RowVectorPartition{.rows = 3, .width = 4}));
  EXPECT_EQ(parts[2], (RowVectorPartition{.rows = 2, .width = 7}));
}

TEST(BlockedEllTimeModel, AddsTransmissionAndComputeOverSms) {
  const BlockedEllTimeCoefficients c{.transfer_elements_per_ms = 10, .sm_elements_per_ms = 2,
                                     .lower_limit_rows = 2, .sm_count = 2};
  // T_t = (10 + 10 + 2 * 31) / 10 = 8.2. T_c: 5 x 2 -> 10 / 2 = 5; 3 x 4 -> 12 / 2 = 6;
  // 2 rows <= L: 7 * 2 / 2 = 7. T = 8.2 + 18 / 2 = 17.2.
  const std::vector<std::int64_t> bounds{2, 4, 7};
  EXPECT_DOUBLE_EQ(transmission_time_ms(10, 10, 31, c), 8.2);
  EXPECT_DOUBLE_EQ(partition_compute_time_ms({.rows = 2, .width = 7}, c), 7.0);
  EXPECT_DOUBLE_EQ(blocked_ell_time_ms(paper_000_example(), bounds, c), 17.2);
}

TEST(BlockedEllTimeModel, RefusesBoundsBelowTheLongestRow) {
  const std::vector<std::int64_t> bounds{2, 4, 6};
  try {
    partitions_from_bounds(paper_000_example(), bounds);
    FAIL() << "expected Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    EXPECT_STREQ(e.what(), "partitions_from_bounds: the last bound 6 is below the longest row 7");
  }
}

TEST(CpuGpuTimeModel, BalancesEquations6To8) {
  const CpuGpuTimeCoefficients c{.cpu_cores = 3, .cpu_operations_per_ms = 4,
                                 .gpu_streaming_processors = 2,
                                 .gpu_operations_per_ms_per_sp = 5};
  // K = 3: GPU gets 2 + 6 + 6 + 3 * 3 = 23 non-zeros, CPU 1 + 3 + 4 = 8.
  // TC = 2 * 8 / 4 / (3 - 1) = 2; TG = 23 / (2 * 5) = 2.3; T = max = 2.3.
  const CpuGpuTime t = cpu_gpu_time_ms(paper_000_example(), 3, c);
  EXPECT_DOUBLE_EQ(t.cpu_ms, 2.0);
  EXPECT_DOUBLE_EQ(t.gpu_ms, 2.3);
  EXPECT_DOUBLE_EQ(t.total_ms, 2.3);
}

// A random gather from an x the host's caches hold costs x_width_ratio of fc's: linear in log x
// bytes between the measured widths, held beyond them, 1 where none is measured.
TEST(CpuGpuTimeModel, ReadsTheXWidthRatioInLogBytesHoldingTheEnds) {
  CpuGpuTimeCoefficients c{.cpu_cores = 3, .cpu_operations_per_ms = 4};
  EXPECT_DOUBLE_EQ(host_x_width_ratio(c, 1e6), 1.0) << "none measured";
  c.x_width_ratio = {{1 << 18, 0.4}, {1 << 21, 0.7}, {1 << 25, 1.0}};
  EXPECT_DOUBLE_EQ(host_x_width_ratio(c, 1000.0), 0.4);
  EXPECT_DOUBLE_EQ(host_x_width_ratio(c, 1 << 18), 0.4);
  EXPECT_NEAR(host_x_width_ratio(c, 1 << 19), 0.5, 1e-12) << "a third of the way in log bytes";
  EXPECT_NEAR(host_x_width_ratio(c, 1 << 23), 0.85, 1e-12);
  EXPECT_DOUBLE_EQ(host_x_width_ratio(c, 1e12), 1.0);
}

// Eq. 6's random gathers at the x width's ratio, a band's not: rho + (r - rho) w, r never
// below rho.
TEST(CpuGpuTimeModel, ScalesTheRandomGathersByTheXWidthRatio) {
  const CpuGpuTimeCoefficients c{.cpu_cores = 3, .cpu_operations_per_ms = 4,
                                 .cpu_banded_ratio = 0.25};
  // 2 * 8 / 4 / (3 - 1) = 2 ms at fc.
  EXPECT_DOUBLE_EQ(cpu_coo_time_ms(8, 1.0, c), 2.0);
  EXPECT_DOUBLE_EQ(cpu_coo_time_ms(8, 1.0, c, 0.5), 1.0);
  EXPECT_DOUBLE_EQ(cpu_coo_time_ms(8, 0.0, c, 0.5), 0.5) << "a band's gathers: rho";
  EXPECT_DOUBLE_EQ(cpu_coo_time_ms(8, 0.5, c, 0.5), 2.0 * (0.25 + 0.25 * 0.5));
  EXPECT_DOUBLE_EQ(cpu_coo_time_ms(8, 1.0, c, 0.1), 0.5) << "no cheaper than the band";
  EXPECT_DOUBLE_EQ(cpu_coo_time_ms(8, 0.5, c), 2.0 * (0.25 + 0.75 * 0.5)) << "ratio 1: as before";
}

TEST(CpuGpuTimeModel, RefusesASingleCpuCore) {
  const CpuGpuTimeCoefficients c{.cpu_cores = 1, .cpu_operations_per_ms = 4,
                                 .gpu_streaming_processors = 2,
                                 .gpu_operations_per_ms_per_sp = 5};
  EXPECT_THROW(cpu_coo_time_ms(10, 1.0, c), Error);
}

}  // namespace
}  // namespace spmvd
