#include "tuner/feature_extraction.hpp"

#include <gtest/gtest.h>

#include "core/structure_features.hpp"

namespace spmvd {
namespace {

// Builds a matrix whose row r has lengths[r] entries in columns 0..len-1.
CsrMatrix<double> matrix_with_row_lengths(const std::vector<int>& lengths, std::int64_t cols) {
  CsrMatrix<double> m;
  m.rows = static_cast<std::int64_t>(lengths.size());
  m.cols = cols;
  for (int length : lengths) {
    for (int c = 0; c < length; ++c) {
      m.col_indices.push_back(c);
      m.values.push_back(1.0);
    }
    m.row_offsets.push_back(static_cast<RowOffset>(m.col_indices.size()));
  }
  return m;
}

TEST(FeatureExtraction, DistributionMatchesPaper000Example) {
  // Paper 000, Sec. 4.1 example: R1={r3,r6}, R2={r1,r4,r10}, R3={r2,r7}, R4={r8}, R6={r9},
  // R7={r5} for rows r1..r10.
  const auto m = matrix_with_row_lengths({2, 3, 1, 2, 7, 1, 3, 4, 6, 2}, 10);
  const MatrixFeatures f = extract_features(m);
  const std::vector<RowLengthCount> expected{{1, 2}, {2, 3}, {3, 2}, {4, 1}, {6, 1}, {7, 1}};
  EXPECT_EQ(f.distribution, expected);
  EXPECT_EQ(f.rows, 10);
  EXPECT_EQ(f.nnz, 31);
  EXPECT_EQ(f.row_length_min, 1);
  EXPECT_EQ(f.row_length_max, 7);
  EXPECT_DOUBLE_EQ(f.row_length_mean, 3.1);
  EXPECT_EQ(f.empty_rows, 0);
}

TEST(FeatureExtraction, EmptyRowsAreCountedOutsideTheDistribution) {
  const auto m = matrix_with_row_lengths({0, 2, 0, 2}, 4);
  const MatrixFeatures f = extract_features(m);
  EXPECT_EQ(f.empty_rows, 2);
  EXPECT_EQ(f.row_length_min, 0);
  const std::vector<RowLengthCount> expected{{2, 2}};
  EXPECT_EQ(f.distribution, expected);
  EXPECT_DOUBLE_EQ(f.row_length_stddev, 1.0);
}

TEST(FeatureExtraction, RowSpanMeasuresXLocality) {
  // Diagonal: every row spans one column of 4.
  CsrMatrix<double> diagonal{4, 4, {0, 1, 2, 3, 4}, {0, 1, 2, 3}, {1, 1, 1, 1}};
  EXPECT_DOUBLE_EQ(extract_features(diagonal).mean_row_span_fraction, 0.25);
  // Every row touches the first and last column.
  CsrMatrix<double> wide{2, 4, {0, 2, 4}, {0, 3, 0, 3}, {1, 1, 1, 1}};
  EXPECT_DOUBLE_EQ(extract_features(wide).mean_row_span_fraction, 1.0);
}

TEST(FeatureExtraction, CountsTheXSectorsEachGroupOfRowsTouches) {
  // A 64 x 64 diagonal: each group of 32 rows touches 32 consecutive columns, 4 sectors of 8.
  CsrMatrix<double> diagonal;
  diagonal.rows = diagonal.cols = 64;
  for (int r = 0; r < 64; ++r) {
    diagonal.col_indices.push_back(r);
    diagonal.values.push_back(1.0);
    diagonal.row_offsets.push_back(r + 1);
  }
  EXPECT_DOUBLE_EQ(extract_features(diagonal).x_sectors_per_nonzero, 8.0 / 64.0);
  // Row r of group g holds column 8 r (a sector of its own) and column 0 (shared by all 32 rows
  // of the group): 33 sectors per group of 64 non-zeros.
  CsrMatrix<double> spread;
  spread.rows = 64;
  spread.cols = 8 * 64;
  for (int r = 0; r < 64; ++r) {
    if (r > 0) spread.col_indices.push_back(0);
    spread.col_indices.push_back(8 * r);
    spread.values.resize(spread.col_indices.size(), 1.0);
    spread.row_offsets.push_back(static_cast<RowOffset>(spread.col_indices.size()));
  }
  // Row 0 holds column 0 once: group 0 touches 32 sectors with 32 non-zeros, group 1 33 with 64.
  EXPECT_DOUBLE_EQ(extract_features(spread).x_sectors_per_nonzero, 65.0 / 127.0);
  CsrMatrix<double> empty{2, 2, {0, 0, 0}, {}, {}};
  EXPECT_DOUBLE_EQ(extract_features(empty).x_sectors_per_nonzero, 0.0);
}

// A band of 64 rows, rows alternately of length 1 (column r) and 2 (columns r, r + 1): every
// group of 32 neighbouring rows gathers from 33 neighbouring columns.
CsrMatrix<double> alternating_band() {
  CsrMatrix<double> m;
  m.rows = 64;
  m.cols = 65;
  for (int r = 0; r < 64; ++r) {
    m.col_indices.push_back(r);
    if (r % 2 == 1) m.col_indices.push_back(r + 1);
    m.values.resize(m.col_indices.size(), 1.0);
    m.row_offsets.push_back(static_cast<RowOffset>(m.col_indices.size()));
  }
  return m;
}

TEST(FeatureExtraction, SortedGathersCountTheSectorsInTheSortedRowOrder) {
  const CsrMatrix<double> m = alternating_band();
  const MatrixFeatures f = extract_features(m);
  // Unsorted: group 0 holds columns 0-32 (5 sectors), group 1 columns 32-64 (5): 10 / 96.
  EXPECT_DOUBLE_EQ(f.x_sectors_per_nonzero, 10.0 / 96.0);
  // Windows 256 and 4096 both clamp to the 64 rows: one entry, the whole matrix sorted.
  ASSERT_EQ(f.sorted_gathers.size(), 1u);
  EXPECT_EQ(f.sorted_gathers[0].sort_window, 64);
  // Sorted whole: the 32 odd rows first (columns 1-64: 9 sectors), then the even rows
  // (columns 0, 2, ..., 62: 8 sectors): 17 / 96, the sort spreads each group over all of x.
  EXPECT_DOUBLE_EQ(f.sorted_x_sectors_per_nonzero(64), 17.0 / 96.0);
  EXPECT_DOUBLE_EQ(f.sorted_x_sectors_per_nonzero(1'000'000), 17.0 / 96.0);  // clamped to rows
  EXPECT_DOUBLE_EQ(f.sorted_x_sectors_per_nonzero(1), f.x_sectors_per_nonzero);
  EXPECT_EQ(f.sorted_x_sectors_per_nonzero(16), -1.0);  // a window not measured
}

TEST(FeatureExtraction, SortedGathersOfOneRowLengthAreTheUnsortedOnes) {
  std::vector<int> lengths(300, 3);
  const MatrixFeatures f = extract_features(matrix_with_row_lengths(lengths, 10));
  ASSERT_EQ(f.sorted_gathers.size(), 2u);  // 256 and the 300 rows (4096 clamps to 300)
  EXPECT_EQ(f.sorted_gathers[0].sort_window, 256);
  EXPECT_EQ(f.sorted_gathers[1].sort_window, 300);
  for (const SortedGathers& g : f.sorted_gathers)
    EXPECT_DOUBLE_EQ(g.x_sectors_per_nonzero, f.x_sectors_per_nonzero);
}

TEST(FeatureExtraction, LengthSortedRowOrderIsStableWithinWindowsAndWhole) {
  const auto m = matrix_with_row_lengths({2, 3, 1, 3, 2, 1, 4}, 10);
  // Windows of 3: {0,1,2} -> 1 0 2, {3,4,5} -> 3 4 5, {6} -> 6.
  EXPECT_EQ(length_sorted_row_order(m, 3), (std::vector<std::int32_t>{1, 0, 2, 3, 4, 5, 6}));
  // Whole (the counting sort): longest first, equal lengths in row order.
  const std::vector<std::int32_t> whole{6, 1, 3, 0, 4, 2, 5};
  EXPECT_EQ(length_sorted_row_order(m, 7), whole);
  EXPECT_EQ(length_sorted_row_order(m, 1000), whole);
  EXPECT_EQ(length_sorted_row_order(m, 6), (std::vector<std::int32_t>{1, 3, 0, 4, 2, 5, 6}));
  EXPECT_EQ(length_sorted_row_order(m, 1), (std::vector<std::int32_t>{0, 1, 2, 3, 4, 5, 6}));
}

TEST(FeatureExtraction, GroupPaddingCountsEveryRowAtItsGroupsLongest) {
  // 70 rows: 40 of length 1, then 30 of length 3.
  std::vector<int> lengths(70, 1);
  for (std::size_t r = 40; r < lengths.size(); ++r) lengths[r] = 3;
  const MatrixFeatures f = extract_features(matrix_with_row_lengths(lengths, 10));
  ASSERT_EQ(f.group_padded.size(), std::size(kFeatureGroupRows));
  // Groups of 32: rows 0-31 -> 1, rows 32-63 -> 3 (rows 40-63 are 3), rows 64-69 -> 3.
  const GroupPaddedDistribution* slices = f.padded_for(32);
  ASSERT_NE(slices, nullptr);
  EXPECT_EQ(slices->distribution, (std::vector<RowLengthCount>{{1, 32}, {3, 38}}));
  // Groups of 64: rows 0-63 -> 3, rows 64-69 -> 3.
  EXPECT_EQ(f.padded_for(64)->distribution, (std::vector<RowLengthCount>{{3, 70}}));
  EXPECT_EQ(f.padded_for(16), nullptr);  // not measured
}

TEST(FeatureExtraction, BlockCountsAreDistinctBlocksOfTheAlignedGrid) {
  // Same matrix: 2x2 blocks (block row, block col): rows 0-1 -> (0,0), (0,1); rows 2-3 ->
  // (1,0), (1,1); row 4 -> (2,0), (2,1): 6. 4x4: rows 0-3 -> (0,0); row 4 -> (1,0): 2.
  const CsrMatrix<double> m{5, 4, {0, 1, 4, 4, 6, 8},
                            {0, 0, 1, 2, 1, 3, 0, 2}, {1, 1, 1, 1, 1, 1, 1, 1}};
  const MatrixFeatures f = extract_features(m);
  EXPECT_EQ(f.blocks_for(2), 6);
  EXPECT_EQ(f.blocks_for(4), 2);
  EXPECT_EQ(f.blocks_for(8), -1);  // not measured
}

TEST(FeatureExtraction, EmptyMatrixHasZeroFeatures) {
  CsrMatrix<double> m;
  m.cols = 3;
  const MatrixFeatures f = extract_features(m);
  EXPECT_EQ(f.rows, 0);
  EXPECT_TRUE(f.distribution.empty());
}

}  // namespace
}  // namespace spmvd
