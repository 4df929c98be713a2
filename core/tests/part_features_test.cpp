#include "core/part_features.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>

#include "core/error.hpp"

namespace spmvd {
namespace {

// Paper 000 Sec. 5.1's 10 x 10 example: B = [2,3,2,1,0,1,1,0,0,0].
std::vector<RowLengthCount> paper_000_distribution() {
  return {{1, 2}, {2, 3}, {3, 2}, {4, 1}, {6, 1}, {7, 1}};
}

TEST(PartFeatures, DescribesTheRowsOfTheDistributionWithTheWholesLocality) {
  MatrixFeatures whole;
  whole.cols = 10;
  whole.x_sectors_per_nonzero = 0.25;
  whole.mean_row_span_fraction = 0.5;
  // C2 of the example with boundaries (2, 4): rows of lengths 3 and 4.
  const MatrixFeatures part = part_features(whole, {{4, 1}, {3, 2}}, 1);
  EXPECT_EQ(part.rows, 4);
  EXPECT_EQ(part.cols, 10);
  EXPECT_EQ(part.nnz, 10);
  EXPECT_EQ(part.empty_rows, 1);
  EXPECT_EQ(part.row_length_min, 0);
  EXPECT_EQ(part.row_length_max, 4);
  EXPECT_DOUBLE_EQ(part.row_length_mean, 2.5);
  EXPECT_DOUBLE_EQ(part.row_length_stddev, std::sqrt((16.0 + 9 + 9) / 4 - 6.25));
  EXPECT_EQ(part.distribution, (std::vector<RowLengthCount>{{3, 2}, {4, 1}}));
  EXPECT_DOUBLE_EQ(part.x_sectors_per_nonzero, 0.25);
  EXPECT_DOUBLE_EQ(part.mean_row_span_fraction, 0.5);
  EXPECT_TRUE(part.format_features.empty());
}

TEST(PartFeatures, RefusesANonPositiveLength) {
  EXPECT_THROW(part_features(MatrixFeatures{}, {{0, 3}}), Error);
  EXPECT_THROW(part_features(MatrixFeatures{}, {{2, -1}}), Error);
  EXPECT_THROW(part_features(MatrixFeatures{}, {{2, 1}}, -1), Error);
}

// part_features merges an already ascending DF in one pass and sorts any other (it once merged
// every DF through a std::map): the features of both ways are equal, bit for bit, for DFs in
// any order, with repeated lengths and sets of no rows.
TEST(PartFeatures, MergesAnyOrderAsAMapOfLengthsDoes) {
  // part_features as it was: every DF merged through a map, then summed in ascending length.
  const auto through_a_map = [](const MatrixFeatures& whole, const std::vector<RowLengthCount>& df,
                                std::int64_t empty_rows) {
    std::map<std::int64_t, std::int64_t> rows_of_length;
    for (const RowLengthCount& c : df)
      if (c.rows > 0) rows_of_length[c.length] += c.rows;
    MatrixFeatures f;
    f.cols = whole.cols;
    f.mean_row_span_fraction = whole.mean_row_span_fraction;
    f.x_sectors_per_nonzero = whole.x_sectors_per_nonzero;
    f.empty_rows = empty_rows;
    f.rows = empty_rows;
    double sum_squares = 0.0;
    for (const auto& [length, rows] : rows_of_length) {
      f.distribution.push_back({length, rows});
      f.rows += rows;
      f.nnz += length * rows;
      sum_squares += static_cast<double>(length) * static_cast<double>(length) *
                     static_cast<double>(rows);
    }
    if (f.rows == 0) return f;
    f.row_length_min = empty_rows > 0 || f.distribution.empty() ? 0 : f.distribution.front().length;
    f.row_length_max = f.distribution.empty() ? 0 : f.distribution.back().length;
    f.row_length_mean = static_cast<double>(f.nnz) / static_cast<double>(f.rows);
    f.row_length_stddev = std::sqrt(std::max(
        0.0, sum_squares / static_cast<double>(f.rows) - f.row_length_mean * f.row_length_mean));
    return f;
  };
  MatrixFeatures whole;
  whole.cols = 5000;
  whole.x_sectors_per_nonzero = 0.3;
  whole.mean_row_span_fraction = 0.1;
  const unsigned seed = 17;
  std::mt19937 random(seed);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<RowLengthCount> df(1 + random() % 40);
    for (RowLengthCount& c : df)
      c = {1 + static_cast<std::int64_t>(random() % 30), static_cast<std::int64_t>(random() % 5000)};
    if (trial % 2 == 0)  // half of them the ascending shape the composed formats hand over
      df = through_a_map(whole, df, 0).distribution;
    const std::int64_t empty_rows = random() % 3;
    EXPECT_EQ(part_features(whole, df, empty_rows), through_a_map(whole, df, empty_rows))
        << "seed " << seed << ", trial " << trial;
  }
}

// Paper 003 Eqs. 2-5 on the example at K = 2: every row keeps min(length, 2) entries.
TEST(TruncateDistribution, SplitsTheExampleAtWidthTwo) {
  const TruncatedDistribution split = truncate_distribution(paper_000_distribution(), 2);
  EXPECT_EQ(split.kept, (std::vector<RowLengthCount>{{1, 2}, {2, 8}}));
  EXPECT_EQ(split.remainder, (std::vector<RowLengthCount>{{1, 2}, {2, 1}, {4, 1}, {5, 1}}));
  std::int64_t kept = 0, left = 0;
  for (const auto& c : split.kept) kept += c.length * c.rows;
  for (const auto& c : split.remainder) left += c.length * c.rows;
  EXPECT_EQ(kept + left, 2 * 1 + 3 * 2 + 2 * 3 + 4 + 6 + 7);
}

TEST(TruncateDistribution, WidthZeroLeavesEverythingAndTheLongestRowKeepsAll) {
  const auto none = truncate_distribution(paper_000_distribution(), 0);
  EXPECT_TRUE(none.kept.empty());
  EXPECT_EQ(none.remainder, paper_000_distribution());
  const auto all = truncate_distribution(paper_000_distribution(), 7);
  EXPECT_EQ(all.kept, paper_000_distribution());
  EXPECT_TRUE(all.remainder.empty());
  EXPECT_THROW(truncate_distribution(paper_000_distribution(), -1), Error);
}

}  // namespace
}  // namespace spmvd
