// BAR (paper 001, Sec. 3.4, Algorithm 2; common/bar_reorder.hpp): its order is a permutation,
// its Eq. 1 objective is never above the identity's, and on rows of two interleaved patterns it
// separates them.

#include "kernels/formats/common/bar_reorder.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>
#include <numeric>
#include <vector>

#include "core/error.hpp"
#include "kernels/formats/common/bro_stream.hpp"
#include "kernels/tests/test_matrices.hpp"

namespace spmvd {
namespace {

std::vector<std::int32_t> identity(std::int64_t rows) {
  std::vector<std::int32_t> order(static_cast<std::size_t>(rows));
  std::iota(order.begin(), order.end(), 0);
  return order;
}

bool is_permutation(std::vector<std::int32_t> order) {
  std::sort(order.begin(), order.end());
  return order == identity(static_cast<std::int64_t>(order.size()));
}

// 64 rows, h = 32: even rows read 8 columns r, r+1, ... (1-bit deltas after the first), odd
// rows 9 columns r, r+1000, ... (10-bit deltas). In the matrix's order every slice mixes both,
// so every row stream takes the odd rows' 87 bits (3 symbols); clustered, the even rows' slice
// needs 14 bits (1 symbol). Algorithm 2 seeds a slice with the longest row (odd) and one with
// sorted row 32 (the first even row) and the rest follow their pattern.
CsrMatrix<double> interleaved_patterns() {
  CsrMatrix<double> m{64, 9000, {0}, {}, {}};
  for (std::int32_t r = 0; r < 64; ++r) {
    const bool even = r % 2 == 0;
    const std::int32_t step = even ? 1 : 1000;
    for (std::int32_t j = 0; j < (even ? 8 : 9); ++j) {
      m.col_indices.push_back(r + j * step);
      m.values.push_back(1.0);
    }
    m.row_offsets.push_back(m.nnz());
  }
  return m;
}

TEST(BarReorder, ObjectiveIsNeverAboveTheIdentitysAndTheOrderIsAPermutation) {
  const std::uint64_t seed = testing::test_seed();
  std::cout << "seed " << seed << " (SPMVD_TEST_SEED)\n";
  for (const auto& [name, m] : testing::conformance_matrices(seed)) {
    if (m.rows > 5000) continue;
    for (const std::uint32_t h : {32u, 256u})
      for (const std::uint32_t window : {1u, 8u}) {
        SCOPED_TRACE(name + " h " + std::to_string(h) + " window " + std::to_string(window));
        const std::vector<std::int32_t> order = bro::bar_order(m, h, window);
        ASSERT_EQ(static_cast<std::int64_t>(order.size()), m.rows);
        EXPECT_TRUE(is_permutation(order));
        const double bar = bro::bar_objective(m, order, h);
        const double none = bro::bar_objective(m, identity(m.rows), h);
        EXPECT_LE(bar, none);
        std::cout << "  " << name << " h=" << h << " window=" << window << ": Phi " << none
                  << " -> " << bar << "\n";
      }
  }
}

TEST(BarReorder, SeparatesInterleavedRowPatterns) {
  const CsrMatrix<double> m = interleaved_patterns();
  const std::vector<std::int32_t> order = bro::bar_order(m, 32, 2);
  EXPECT_TRUE(is_permutation(order));
  EXPECT_LT(bro::bar_objective(m, order, 32), bro::bar_objective(m, identity(64), 32));
  // Fewer stream bits follow: the BRO-ELL stream of the BAR order is smaller.
  const auto reordered = bro::bro_ell_size(bro::permute_rows(m, order), 32, 1);
  const auto original = bro::bro_ell_size(m, 32, 1);
  EXPECT_EQ(original.stream_words, 64 * 3);
  EXPECT_EQ(reordered.stream_words, 32 * 3 + 32 * 1);
}

// Eq. 1 by hand on the paper's matrix A as one slice (h = 32, w = 32): d = {3, 2, 2, 1, 1}
// (9 bits: one symbol); x lines of 16 entries: every column of A in line 0, one line per
// column position that any row reaches (5) -> Phi = 32/32 * (1 + 5) = 6.
TEST(BarReorder, ObjectiveOfThePaperExampleIsCountedByHand) {
  const CsrMatrix<double> a{4,
                            5,
                            {0, 2, 7, 10, 12},
                            {0, 2, 0, 1, 2, 3, 4, 1, 2, 4, 3, 4},
                            {3, 2, 2, 6, 5, 4, 1, 1, 9, 7, 8, 3}};
  EXPECT_DOUBLE_EQ(bro::bar_objective(a, identity(4), 32), 6.0);
}

TEST(BarReorder, RejectsZeroSliceHeightAndWindow) {
  const CsrMatrix<double> m = interleaved_patterns();
  try {
    bro::bar_order(m, 0);
    FAIL() << "no throw";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "bar: slice height is 0");
  }
  EXPECT_THROW(bro::bar_order(m, 32, 0), Error);
}

}  // namespace
}  // namespace spmvd
