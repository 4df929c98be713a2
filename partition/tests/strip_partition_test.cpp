#include "partition/strip_partition.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <iostream>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "partition/tests/paper_000_example.hpp"

namespace spmvd {
namespace {

// Sorted descending, the example's lengths are 7, 6, 4, 3, 3, 2, 2, 2, 1, 1.
RowLengthDistribution paper_example() {
  return row_length_distribution(testing::paper_000_row_offsets());
}

// CSR vector: a fixed cost per strip plus its non-zeros; ELL: its padded slots.
StripPartitionCosts launch_plus_nnz_vs_slots(double strip_launch_ms) {
  return StripPartitionCosts{
      .csr_vector_strip_ms =
          [strip_launch_ms](const SortedRowsPart& s) {
            return strip_launch_ms + static_cast<double>(s.nnz);
          },
      .ell_part_ms = [](const SortedRowsPart& p) { return static_cast<double>(p.rows * p.width); }};
}

TEST(StripPartition, StripOfTheGtx295HoldsNineHundredSixtyRows) {
  // Paper 004 Sec. 5: 30 SMs x 1024 resident threads (4 blocks of 8 warps), a warp per row.
  DeviceInfo gtx_295;
  gtx_295.sm_count = 30;
  gtx_295.warp_size = 32;
  const Occupancy occupancy{.active_blocks_per_sm = 4, .warps_per_block = 8};
  EXPECT_EQ(strip_rows_from_occupancy(occupancy, gtx_295, 32), 960);
  EXPECT_EQ(strip_rows_from_occupancy(occupancy, gtx_295, 4), 7680);
}

TEST(StripPartition, CutsTheSortedPaperExampleIntoStrips) {
  RowLengthDistribution df = paper_example();
  df.empty_rows = 2;
  df.rows += 2;
  const std::vector<SortedRowsPart> strips = sorted_strips(df, 3);
  EXPECT_EQ(strips,
            (std::vector<SortedRowsPart>{{.first_row = 0, .rows = 3, .nnz = 17, .width = 7},
                                         {.first_row = 3, .rows = 3, .nnz = 8, .width = 3},
                                         {.first_row = 6, .rows = 3, .nnz = 5, .width = 2},
                                         {.first_row = 9, .rows = 3, .nnz = 1, .width = 1}}));
}

TEST(StripPartition, SeparatesTheLongRowsOfThePaperExample) {
  // Strips of 3, CSR strip = 10 + nnz, ELL = rows x width. Separator after s strips:
  // 0: ELL 10 x 7 = 70; 1: 27 + 7 x 3 = 48; 2: 45 + 4 x 2 = 53; 3: 60 + 1 = 61; 4: CSR 71.
  const StripPartition p =
      strip_partition(paper_example(), launch_plus_nnz_vs_slots(10.0), {.strip_rows = 3});
  EXPECT_EQ(p.separator_row, 3);
  EXPECT_TRUE(p.splits());
  EXPECT_DOUBLE_EQ(p.csr_vector_ms, 27.0);
  EXPECT_DOUBLE_EQ(p.ell_ms, 21.0);
  EXPECT_DOUBLE_EQ(p.total_ms, 48.0);
}

TEST(StripPartition, KeepsOneFormatWhenASplitGainsTooLittle) {
  // The split's 48 is not below half of the better single format (ELL, 70).
  const StripPartition p = strip_partition(paper_example(), launch_plus_nnz_vs_slots(10.0),
                                           {.strip_rows = 3, .min_gain_fraction = 0.5});
  EXPECT_TRUE(p.all_ell());
  EXPECT_DOUBLE_EQ(p.total_ms, 70.0);
}

TEST(StripPartition, NoPartitionWhenEllWinsOutright) {
  // Every row of length 4: ELL has no padding and no launch per strip.
  const RowLengthDistribution df{.rows = 10, .empty_rows = 0, .nnz = 40, .sets = {{4, 10}}};
  const StripPartition p = strip_partition(df, launch_plus_nnz_vs_slots(1.0), {.strip_rows = 3});
  EXPECT_TRUE(p.all_ell());
  EXPECT_FALSE(p.splits());
  EXPECT_DOUBLE_EQ(p.total_ms, 40.0);
}

TEST(StripPartition, NoPartitionWhenCsrVectorWinsOutright) {
  const StripPartitionCosts costs{
      .csr_vector_strip_ms =
          [](const SortedRowsPart& s) { return 0.1 * static_cast<double>(s.nnz); },
      .ell_part_ms =
          [](const SortedRowsPart& p) { return 10.0 * static_cast<double>(p.rows * p.width); }};
  const StripPartition p = strip_partition(paper_example(), costs, {.strip_rows = 3});
  EXPECT_TRUE(p.all_csr_vector());
  EXPECT_EQ(p.separator_row, 10);
  EXPECT_DOUBLE_EQ(p.ell_ms, 0.0);
  EXPECT_DOUBLE_EQ(p.total_ms, 3.1);
}

TEST(StripPartition, MatchesEverySeparatorCostedFromExplicitlySortedRows) {
  for (unsigned seed = 600; seed < 640; ++seed) {
    std::cout << "seed " << seed << "\n";
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937_64 rng(seed);
    std::vector<std::int64_t> lengths(static_cast<std::size_t>(rng() % 3000) + 1);
    for (std::int64_t& length : lengths) {
      const auto u = rng() % 100;
      length = u < 5    ? 0
               : u < 97 ? static_cast<std::int64_t>(rng() % 12) + 1
                        : static_cast<std::int64_t>(rng() % 3000) + 1;
    }
    std::vector<std::int64_t> offsets{0};
    for (const std::int64_t length : lengths) offsets.push_back(offsets.back() + length);
    const RowLengthDistribution df = row_length_distribution(offsets);
    const std::int64_t strip_rows = static_cast<std::int64_t>(rng() % 200) + 1;
    const double launch_ms = static_cast<double>(rng() % 500);
    const StripPartitionCosts costs = launch_plus_nnz_vs_slots(launch_ms);

    // Reference: sort, slice, cost every separator directly.
    std::sort(lengths.begin(), lengths.end(), std::greater<>());
    const auto n = static_cast<std::int64_t>(lengths.size());
    double best = std::numeric_limits<double>::infinity();
    for (std::int64_t sep = 0;; sep = std::min(n, sep + strip_rows)) {
      double total = 0.0;
      for (std::int64_t first = 0; first < sep; first += strip_rows) {
        std::int64_t nnz = 0;
        for (std::int64_t r = first; r < std::min(sep, first + strip_rows); ++r) nnz += lengths[r];
        total += launch_ms + static_cast<double>(nnz);
      }
      if (sep < n) total += static_cast<double>((n - sep) * lengths[sep]);
      best = std::min(best, total);
      if (sep == n) break;
    }
    const StripPartition p = strip_partition(df, costs, {.strip_rows = strip_rows});
    EXPECT_DOUBLE_EQ(p.total_ms, best);
    EXPECT_TRUE(p.separator_row % strip_rows == 0 || p.separator_row == n);
  }
}

TEST(StripPartition, RefusesStripsWithoutRows) {
  try {
    strip_partition(paper_example(), launch_plus_nnz_vs_slots(1.0), {.strip_rows = 0});
    FAIL() << "expected Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    EXPECT_STREQ(e.what(), "sorted_strips: strip_rows 0 is not positive");
  }
}

}  // namespace
}  // namespace spmvd
