// The RCM order (Boost.Graph) and the symmetric permutation it is applied with: a permutation,
// a function of the pattern alone, and a renumbered band or mesh gets its band back.

#include "partition/rcm_order.hpp"

#include <gtest/gtest.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cstdint>
#include <iostream>
#include <map>
#include <numeric>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "partition/symmetric_permutation.hpp"

namespace spmvd {
namespace {

constexpr std::uint64_t kSeed = 20261124;

std::string message_of(const auto& call) {
  try {
    call();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no throw)";
}

// A square matrix from (row, column) -> value, rows ascending, columns ascending.
CsrMatrix<double> from_entries(
    std::int64_t n, const std::map<std::pair<std::int64_t, std::int64_t>, double>& entries) {
  CsrMatrix<double> m{n, n, {0}, {}, {}};
  std::int64_t row = 0;
  for (const auto& [at, value] : entries) {
    while (row < at.first) {
      m.row_offsets.push_back(static_cast<RowOffset>(m.col_indices.size()));
      ++row;
    }
    m.col_indices.push_back(static_cast<ColIndex>(at.second));
    m.values.push_back(value);
  }
  while (row < n) {
    m.row_offsets.push_back(static_cast<RowOffset>(m.col_indices.size()));
    ++row;
  }
  validate(m);
  return m;
}

// Row r holds columns [r - half, r + half] (a band of 2 * half + 1), values r + c / 1000.
std::map<std::pair<std::int64_t, std::int64_t>, double> band_entries(std::int64_t n,
                                                                     std::int64_t half) {
  std::map<std::pair<std::int64_t, std::int64_t>, double> e;
  for (std::int64_t r = 0; r < n; ++r)
    for (std::int64_t c = std::max<std::int64_t>(0, r - half); c <= std::min(n - 1, r + half); ++c)
      e[{r, c}] = static_cast<double>(r) + static_cast<double>(c) / 1000.0;
  return e;
}

// The 5-point stencil of a side x side grid.
std::map<std::pair<std::int64_t, std::int64_t>, double> grid_entries(std::int64_t side) {
  std::map<std::pair<std::int64_t, std::int64_t>, double> e;
  for (std::int64_t i = 0; i < side; ++i)
    for (std::int64_t j = 0; j < side; ++j) {
      const std::int64_t r = i * side + j;
      e[{r, r}] = 4.0;
      if (i > 0) e[{r, r - side}] = -1.0;
      if (i + 1 < side) e[{r, r + side}] = -1.0;
      if (j > 0) e[{r, r - 1}] = -1.0;
      if (j + 1 < side) e[{r, r + 1}] = -1.0;
    }
  return e;
}

// The same entries with rows and columns renumbered by a seeded random permutation: the
// structure kept, its locality gone (issue 16's "randomly renumbered" suite class).
CsrMatrix<double> randomly_renumbered(
    std::int64_t n, const std::map<std::pair<std::int64_t, std::int64_t>, double>& entries,
    std::uint64_t seed) {
  std::vector<std::int64_t> renumber(static_cast<std::size_t>(n));
  std::iota(renumber.begin(), renumber.end(), 0);
  std::mt19937_64 rng(seed);
  std::shuffle(renumber.begin(), renumber.end(), rng);
  std::map<std::pair<std::int64_t, std::int64_t>, double> out;
  for (const auto& [at, value] : entries)
    out[{renumber[static_cast<std::size_t>(at.first)],
         renumber[static_cast<std::size_t>(at.second)]}] = value;
  return from_entries(n, out);
}

void expect_permutation(const std::vector<std::int32_t>& order, std::int64_t n) {
  ASSERT_EQ(static_cast<std::int64_t>(order.size()), n);
  std::vector<std::int32_t> sorted = order;
  std::sort(sorted.begin(), sorted.end());
  for (std::int64_t i = 0; i < n; ++i) ASSERT_EQ(sorted[static_cast<std::size_t>(i)], i);
}

// A path 0-1-2-3-4 numbered 2, 0, 4, 1, 3 along it: RCM walks it from an end, bandwidth 1.
TEST(RcmOrder, WalksARenumberedPathFromAnEndToBandwidthOne) {
  const std::vector<std::int64_t> along{2, 0, 4, 1, 3};
  std::map<std::pair<std::int64_t, std::int64_t>, double> e;
  for (std::size_t k = 0; k + 1 < along.size(); ++k) {
    e[{along[k], along[k + 1]}] = 1.0;
    e[{along[k + 1], along[k]}] = 1.0;
  }
  const CsrMatrix<double> m = from_entries(5, e);
  EXPECT_EQ(matrix_bandwidth(m), 4);  // entries (4, 0) and (0, 4)
  const std::vector<std::int32_t> order = rcm_order(m);
  expect_permutation(order, 5);
  EXPECT_EQ(matrix_bandwidth(m, order), 1);
  // An end of the path first or last: 2 or 3.
  EXPECT_TRUE((order.front() == 2 && order.back() == 3) ||
              (order.front() == 3 && order.back() == 2));
}

TEST(RcmOrder, IsAPermutationOfTheRowsWithEmptyRowsAndSeveralComponents) {
  // Two bands of 100 rows interleaved (row r linked to r +- 2: the even and the odd rows), cut
  // at every tenth row, which is empty: many components, and isolated vertices.
  std::map<std::pair<std::int64_t, std::int64_t>, double> e;
  for (std::int64_t r = 0; r < 200; ++r) {
    if (r % 10 == 9) continue;
    for (const std::int64_t c : {r - 2, r, r + 2})
      if (c >= 0 && c < 200 && c % 10 != 9) e[{r, c}] = 1.0;
  }
  const CsrMatrix<double> m = from_entries(200, e);
  const std::vector<std::int32_t> order = rcm_order(m);
  expect_permutation(order, 200);
  EXPECT_EQ(matrix_bandwidth(m), 2);
  EXPECT_LE(matrix_bandwidth(m, order), 2);
}

TEST(RcmOrder, IsAFunctionOfThePatternAlone) {
  std::cout << "seed " << kSeed << "\n";
  const CsrMatrix<double> m = randomly_renumbered(3000, band_entries(3000, 4), kSeed);
  const std::vector<std::int32_t> first = rcm_order(m);
  EXPECT_EQ(rcm_order(m), first);
  CsrMatrix<double> other_values = m;
  for (double& v : other_values.values) v = -2.0 * v + 1.0;
  EXPECT_EQ(rcm_order(other_values), first);
  // A nonsymmetric pattern orders as its symmetrisation: the upper triangle alone gives the
  // order of the whole.
  CsrMatrix<double> upper{m.rows, m.cols, {0}, {}, {}};
  for (std::int64_t r = 0; r < m.rows; ++r) {
    for (RowOffset k = m.row_offsets[static_cast<std::size_t>(r)];
         k < m.row_offsets[static_cast<std::size_t>(r + 1)]; ++k)
      if (m.col_indices[static_cast<std::size_t>(k)] >= r) {
        upper.col_indices.push_back(m.col_indices[static_cast<std::size_t>(k)]);
        upper.values.push_back(m.values[static_cast<std::size_t>(k)]);
      }
    upper.row_offsets.push_back(static_cast<RowOffset>(upper.col_indices.size()));
  }
  EXPECT_EQ(rcm_order(upper), first);
}

// Called from several threads at once (feature extraction's hooks and builds run in
// parallel), every call gives the same order.
TEST(RcmOrder, GivesTheSameOrderFromConcurrentCalls) {
  const CsrMatrix<double> m = randomly_renumbered(1600, grid_entries(40), kSeed + 4);
  const std::vector<std::int32_t> expected = rcm_order(m);
  std::vector<std::vector<std::int32_t>> orders(8);
  tbb::parallel_for(std::size_t{0}, orders.size(),
                    [&](std::size_t i) { orders[i] = rcm_order(m); });
  for (const auto& order : orders) EXPECT_EQ(order, expected);
}

// A band of half-width 4 (3000 rows) randomly renumbered spans nearly all of x; RCM gives the
// band back (within twice its half-width: RCM's level sets of a band are its half-width wide).
TEST(RcmOrder, GivesARandomlyRenumberedBandItsBandBack) {
  std::cout << "seed " << kSeed << "\n";
  const CsrMatrix<double> m = randomly_renumbered(3000, band_entries(3000, 4), kSeed);
  const std::int64_t before = matrix_bandwidth(m);
  const std::vector<std::int32_t> order = rcm_order(m);
  expect_permutation(order, 3000);
  const std::int64_t after = matrix_bandwidth(m, order);
  std::cout << "band 9 of 3000 renumbered: bandwidth " << before << " -> " << after << "\n";
  EXPECT_GT(before, 2000);
  EXPECT_LE(after, 8);
  EXPECT_GE(after, 4);  // no order of a band of half-width 4 does better
}

// A 40 x 40 five-point grid randomly renumbered: RCM's level sets are the grid's anti-diagonals,
// at most 40 vertices, so the bandwidth comes back below two grid lines.
TEST(RcmOrder, GivesARandomlyRenumberedGridABandOfAboutOneGridLine) {
  const CsrMatrix<double> m = randomly_renumbered(1600, grid_entries(40), kSeed + 1);
  const std::vector<std::int32_t> order = rcm_order(m);
  const std::int64_t before = matrix_bandwidth(m);
  const std::int64_t after = matrix_bandwidth(m, order);
  std::cout << "grid 40x40 renumbered: bandwidth " << before << " -> " << after << "\n";
  EXPECT_GT(before, 1000);
  EXPECT_LE(after, 80);
  EXPECT_GE(after, 40);
}

TEST(RcmOrder, RefusesANonSquareMatrix) {
  CsrMatrix<double> m{3, 5, {0, 1, 1, 2}, {4, 0}, {1.0, 2.0}};
  EXPECT_EQ(message_of([&] { rcm_order(m); }),
            "rcm_order: the matrix is 3 x 5; RCM renumbers rows and columns alike and needs a "
            "square matrix");
  EXPECT_EQ(message_of([&] {
              permute_symmetric(m, std::vector<std::int32_t>{0, 1, 2});
            }),
            "permute_symmetric: the matrix is 3 x 5; a symmetric permutation needs a square "
            "matrix");
}

TEST(RcmOrder, OrdersAnEmptyMatrixAsNothing) {
  EXPECT_TRUE(rcm_order(CsrMatrix<double>{}).empty());
}

// Entry (i, j) of P A P^T is entry (order[i], order[j]) of A, and its bandwidth is what
// matrix_bandwidth(A, order) says without building it.
TEST(SymmetricPermutation, MovesEveryEntryToItsRenumberedRowAndColumn) {
  const CsrMatrix<double> m = randomly_renumbered(500, band_entries(500, 3), kSeed + 2);
  std::vector<std::int32_t> order(500);
  std::iota(order.begin(), order.end(), 0);
  std::mt19937_64 rng(kSeed + 3);
  std::shuffle(order.begin(), order.end(), rng);
  const CsrMatrix<double> p = permute_symmetric(m, order);
  validate(p);
  ASSERT_EQ(p.nnz(), m.nnz());
  std::map<std::pair<std::int64_t, std::int64_t>, double> original;
  for (std::int64_t r = 0; r < m.rows; ++r)
    for (RowOffset k = m.row_offsets[static_cast<std::size_t>(r)];
         k < m.row_offsets[static_cast<std::size_t>(r + 1)]; ++k)
      original[{r, m.col_indices[static_cast<std::size_t>(k)]}] =
          m.values[static_cast<std::size_t>(k)];
  for (std::int64_t i = 0; i < p.rows; ++i)
    for (RowOffset k = p.row_offsets[static_cast<std::size_t>(i)];
         k < p.row_offsets[static_cast<std::size_t>(i + 1)]; ++k) {
      const std::int64_t j = p.col_indices[static_cast<std::size_t>(k)];
      const auto at =
          original.find({order[static_cast<std::size_t>(i)], order[static_cast<std::size_t>(j)]});
      ASSERT_NE(at, original.end()) << "entry (" << i << ", " << j << ")";
      EXPECT_EQ(at->second, p.values[static_cast<std::size_t>(k)]);
    }
  EXPECT_EQ(matrix_bandwidth(m, order), matrix_bandwidth(p));
}

TEST(SymmetricPermutation, RefusesAnOrderThatIsNotAPermutation) {
  const CsrMatrix<double> m = from_entries(3, band_entries(3, 1));
  EXPECT_EQ(message_of([&] {
              permute_symmetric(m, std::vector<std::int32_t>{0, 2, 2});
            }),
            "permute_symmetric: order entry 2 repeats row 2");
  EXPECT_EQ(message_of([&] {
              matrix_bandwidth(m, std::vector<std::int32_t>{0, 1, 3});
            }),
            "matrix_bandwidth: order entry 2 is 3, outside 0..2");
  EXPECT_EQ(message_of([&] {
              permute_symmetric(m, std::vector<std::int32_t>{0, 1});
            }),
            "permute_symmetric: the order has 2 entries, the matrix 3 rows");
}

}  // namespace
}  // namespace spmvd
