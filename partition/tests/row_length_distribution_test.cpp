#include "partition/row_length_distribution.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <iostream>
#include <map>
#include <random>
#include <vector>

#include "core/error.hpp"
#include "partition/row_vector_sets.hpp"
#include "partition/tests/paper_000_example.hpp"

namespace spmvd {
namespace {

std::vector<std::int64_t> offsets_from_lengths(const std::vector<std::int64_t>& lengths) {
  std::vector<std::int64_t> offsets{0};
  for (const std::int64_t length : lengths) offsets.push_back(offsets.back() + length);
  return offsets;
}

TEST(RowLengthDistribution, PaperExampleGivesTheDfOfSection5_1) {
  const RowLengthDistribution df = row_length_distribution(testing::paper_000_row_offsets());

  // B = [b_1, ..., b_10] = [2, 3, 2, 1, 0, 1, 1, 0, 0, 0] (paper 000 Sec. 5.1).
  std::vector<std::int64_t> b(10, 0);
  for (const RowLengthCount& set : df.sets) b[set.length - 1] = set.rows;
  EXPECT_EQ(b, (std::vector<std::int64_t>{2, 3, 2, 1, 0, 1, 1, 0, 0, 0}));
  EXPECT_EQ(df.rows, 10);
  EXPECT_EQ(df.empty_rows, 0);
  EXPECT_EQ(df.nnz, 31);
}

TEST(RowLengthDistribution, CountsEmptyRowsApartFromTheSets) {
  const RowLengthDistribution df = row_length_distribution(offsets_from_lengths({0, 2, 0, 2, 5}));
  EXPECT_EQ(df.empty_rows, 2);
  EXPECT_EQ(df.sets, (std::vector<RowLengthCount>{{2, 2}, {5, 1}}));
  EXPECT_EQ(df.nnz, 9);
}

TEST(RowLengthDistribution, CountsRowsLongerThanTheDenseHistogram) {
  const RowLengthDistribution df =
      row_length_distribution(offsets_from_lengths({5000, 1, 5000, 70000, 1023, 1024}));
  EXPECT_EQ(df.sets,
            (std::vector<RowLengthCount>{{1, 1}, {1023, 1}, {1024, 1}, {5000, 2}, {70000, 1}}));
}

TEST(RowLengthDistribution, MatchesASerialCountOnRandomRows) {
  const unsigned seed = 15001;
  std::cout << "seed " << seed << "\n";
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  std::vector<std::int64_t> lengths(300'000);
  std::map<std::int64_t, std::int64_t> expected;
  std::int64_t empty = 0;
  for (std::int64_t& length : lengths) {
    // Mostly short rows, some empty, a few past the dense histogram.
    const auto u = rng() % 1000;
    length = u < 50    ? 0
             : u < 995 ? static_cast<std::int64_t>(rng() % 64) + 1
                       : static_cast<std::int64_t>(rng() % 20000) + 1;
    if (length == 0) {
      ++empty;
    } else {
      ++expected[length];
    }
  }
  const RowLengthDistribution df = row_length_distribution(offsets_from_lengths(lengths));
  std::vector<RowLengthCount> expected_sets;
  for (const auto& [length, rows] : expected) expected_sets.push_back({length, rows});
  EXPECT_EQ(df.sets, expected_sets);
  EXPECT_EQ(df.empty_rows, empty);
  EXPECT_EQ(df.rows, 300'000);
}

TEST(RowLengthDistribution, RefusesDecreasingOffsetsNamingTheRow) {
  try {
    row_length_distribution(std::vector<std::int64_t>{0, 2, 4, 3, 5});
    FAIL() << "expected Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    EXPECT_STREQ(e.what(),
                 "row_length_distribution: row 2: row offset 3 < 4 (offsets must not decrease)");
  }
}

TEST(RowLengthDistribution, FillsTheFeaturesTheModelsRead) {
  const MatrixFeatures f =
      distribution_features(row_length_distribution(offsets_from_lengths({0, 2, 4})), 7);
  EXPECT_EQ(f.rows, 3);
  EXPECT_EQ(f.cols, 7);
  EXPECT_EQ(f.nnz, 6);
  EXPECT_EQ(f.empty_rows, 1);
  EXPECT_EQ(f.row_length_min, 0);
  EXPECT_EQ(f.row_length_max, 4);
  EXPECT_DOUBLE_EQ(f.row_length_mean, 2.0);
  EXPECT_EQ(f.distribution, (std::vector<RowLengthCount>{{2, 1}, {4, 1}}));
}

TEST(RowVectorSets, GivesNWNnzEAndDOfThePaperExampleBlocks) {
  const RowLengthDistribution df = row_length_distribution(testing::paper_000_row_offsets());
  const RowVectorSets sets(df.sets);  // lengths 1, 2, 3, 4, 6, 7
  ASSERT_EQ(sets.size(), 6);

  // C1 = R_1 u R_2, C2 = R_3 u R_4, C3 = R_6 u R_7 (boundaries (2, 4), paper 000 Sec. 6.2).
  const RowVectorSetRange c1 = sets.range(0, 2), c2 = sets.range(2, 4), c3 = sets.range(4, 6);
  EXPECT_EQ(c1, (RowVectorSetRange{.rows = 5, .width = 2, .nnz = 8}));
  EXPECT_EQ(c2, (RowVectorSetRange{.rows = 3, .width = 4, .nnz = 10}));
  EXPECT_EQ(c3, (RowVectorSetRange{.rows = 2, .width = 7, .nnz = 13}));
  EXPECT_EQ(c1.entries(), 10);
  EXPECT_EQ(c2.entries(), 12);
  EXPECT_EQ(c2.padding(), 2);
  EXPECT_EQ(c3.entries(), 14);
  EXPECT_DOUBLE_EQ(c1.density(), 0.8);
  EXPECT_EQ(sets.all(), (RowVectorSetRange{.rows = 10, .width = 7, .nnz = 31}));
}

TEST(RowVectorSets, RefusesSetsOutOfOrder) {
  const std::vector<RowLengthCount> sets{{2, 1}, {2, 3}};
  try {
    RowVectorSets{sets};
    FAIL() << "expected Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    EXPECT_STREQ(e.what(),
                 "RowVectorSets: set 1 {length 2, rows 3} must have a positive length above the "
                 "set before and rows > 0");
  }
}

}  // namespace
}  // namespace spmvd
