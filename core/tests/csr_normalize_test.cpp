// sort_rows_and_sum_duplicates: tiny hand-checked rows, then a seeded random matrix large
// enough to be split across oneTBB tasks, checked against a serial map-based reference.

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <random>
#include <vector>

#include "core/csr_matrix.hpp"
#include "core/csr_normalize.hpp"

namespace spmvd {
namespace {

TEST(CsrNormalize, SortedMatrixIsLeftAsItIs) {
  CsrMatrix<double> m{2, 3, {0, 2, 3}, {0, 2, 1}, {1.0, 2.0, 3.0}};
  const CsrMatrix<double> before = m;
  const NormalizeOutcome outcome = sort_rows_and_sum_duplicates(m);
  EXPECT_EQ(outcome.rows_sorted, 0);
  EXPECT_EQ(outcome.duplicates_summed, 0);
  EXPECT_EQ(m.col_indices, before.col_indices);
  EXPECT_EQ(m.values, before.values);
}

TEST(CsrNormalize, UnsortedRowIsSortedWithItsValues) {
  CsrMatrix<double> m{1, 4, {0, 3}, {3, 0, 2}, {30.0, 0.5, 20.0}};
  const NormalizeOutcome outcome = sort_rows_and_sum_duplicates(m);
  EXPECT_EQ(outcome.rows_sorted, 1);
  EXPECT_EQ(outcome.duplicates_summed, 0);
  EXPECT_EQ(m.col_indices, (std::vector<ColIndex>{0, 2, 3}));
  EXPECT_EQ(m.values, (std::vector<double>{0.5, 20.0, 30.0}));
  EXPECT_NO_THROW(validate(m));
}

TEST(CsrNormalize, DuplicatesAreSummedAndLaterRowsMoveUp) {
  // row 0: (1, 1) (1, 2) (0, 4) -> (0, 4) (1, 3); row 1: (2, 5) (2, 5) -> (2, 10); row 2 empty;
  // row 3: (0, 1)
  CsrMatrix<double> m{4, 3, {0, 3, 5, 5, 6}, {1, 1, 0, 2, 2, 0}, {1, 2, 4, 5, 5, 1}};
  const NormalizeOutcome outcome = sort_rows_and_sum_duplicates(m);
  EXPECT_EQ(outcome.rows_sorted, 2);
  EXPECT_EQ(outcome.duplicates_summed, 2);
  EXPECT_EQ(m.row_offsets, (std::vector<RowOffset>{0, 2, 3, 3, 4}));
  EXPECT_EQ(m.col_indices, (std::vector<ColIndex>{0, 1, 2, 0}));
  EXPECT_EQ(m.values, (std::vector<double>{4, 3, 10, 1}));
  EXPECT_NO_THROW(validate(m));
}

TEST(CsrNormalize, DuplicatesAreSummedInUploadOrder) {
  // 1e16 + 1 - 1e16 is 0 in that order and 1 in another: the order is part of the contract.
  CsrMatrix<double> m{1, 1, {0, 3}, {0, 0, 0}, {1e16, 1.0, -1e16}};
  sort_rows_and_sum_duplicates(m);
  EXPECT_EQ(m.values, (std::vector<double>{(1e16 + 1.0) - 1e16}));
}

TEST(CsrNormalize, RandomScipyStyleMatrixMatchesASerialReference) {
  const std::uint64_t seed = 20261123;
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const std::int64_t rows = 50'000, cols = 3'000;
  std::uniform_int_distribution<int> length(0, 12);
  std::uniform_int_distribution<ColIndex> column(0, static_cast<ColIndex>(cols - 1));
  std::uniform_int_distribution<int> small_value(-8, 8);  // integers: sums are exact
  CsrMatrix<double> m{rows, cols, {0}, {}, {}};
  std::vector<std::map<ColIndex, double>> expected(static_cast<std::size_t>(rows));
  for (std::int64_t r = 0; r < rows; ++r) {
    const int n = length(rng);
    for (int k = 0; k < n; ++k) {
      // Every fourth entry repeats a column of this row, as finite-element assembly does.
      const bool repeat = k > 0 && k % 4 == 0;
      const ColIndex c = repeat ? m.col_indices[m.col_indices.size() - 1] : column(rng);
      const double v = small_value(rng);
      m.col_indices.push_back(c);
      m.values.push_back(v);
      expected[static_cast<std::size_t>(r)][c] += v;
    }
    m.row_offsets.push_back(m.nnz());
  }
  sort_rows_and_sum_duplicates(m);
  ASSERT_NO_THROW(validate(m));
  for (std::int64_t r = 0; r < rows; ++r) {
    const auto& want = expected[static_cast<std::size_t>(r)];
    ASSERT_EQ(m.row_length(r), static_cast<RowOffset>(want.size())) << "row " << r;
    RowOffset k = m.row_offsets[r];
    for (const auto& [c, v] : want) {
      ASSERT_EQ(m.col_indices[k], c) << "row " << r;
      ASSERT_EQ(m.values[k], v) << "row " << r << " column " << c;
      ++k;
    }
  }
}

}  // namespace
}  // namespace spmvd
