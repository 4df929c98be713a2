// cuda_dia's host layout (kernels/formats/cuda_dia/dia_layout.hpp), the reference its device
// build is compared with: offsets and diagonal-major values worked out by hand on tiny
// matrices, and a DIA multiply over the built arrays against reference_spmv on the conformance
// matrices of few diagonals (label unit, no GPU needed).

#include "kernels/formats/cuda_dia/dia_layout.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "kernels/formats/cuda_dia/cuda_dia_rules.hpp"
#include "kernels/tests/test_matrices.hpp"

namespace spmvd {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::IsEmpty;

// Diagonals (column - row) -2 (4, 8), -1 (5), 0 (1, 3, 9), 1 (6), 2 (2, 7); row 3 is empty.
//   [1 . 2 . .]
//   [. 3 . . .]
//   [4 5 . 6 7]
//   [. . . . .]
//   [. . 8 . 9]
CsrMatrix<double> five_by_five() {
  return CsrMatrix<double>{
      5, 5, {0, 2, 3, 7, 7, 9}, {0, 2, 1, 0, 1, 3, 4, 2, 4}, {1, 2, 3, 4, 5, 6, 7, 8, 9}};
}

TEST(DiaLayout, StoresEachOccupiedDiagonalAsAFullColumnOfRows) {
  const DiaLayout<double> dia = make_dia_layout<double>(five_by_five());
  EXPECT_EQ(dia.rows, 5);
  EXPECT_THAT(dia.offsets, ElementsAre(-2, -1, 0, 1, 2));
  EXPECT_THAT(dia.values, ElementsAreArray<double>({0, 0, 4, 0, 8,     // offset -2
                                                    0, 0, 5, 0, 0,     // offset -1
                                                    1, 3, 0, 0, 9,     // offset 0
                                                    0, 0, 6, 0, 0,     // offset 1
                                                    2, 0, 7, 0, 0}));  // offset 2
}

// 2 x 4: offsets -1 (1), 1 (2) and 3 (5, the far corner); diagonals 0 and 2 stay out.
//   [. . . 5]
//   [1 . 2 .]
TEST(DiaLayout, KeepsOnlyOccupiedOffsetsOfAWideMatrix) {
  const CsrMatrix<double> wide{2, 4, {0, 1, 3}, {3, 0, 2}, {5, 1, 2}};
  const DiaLayout<float> dia = make_dia_layout<float>(wide);
  EXPECT_THAT(dia.offsets, ElementsAre(-1, 1, 3));
  EXPECT_THAT(dia.values, ElementsAreArray<float>({0, 1,     // offset -1
                                                   0, 2,     // offset 1
                                                   5, 0}));  // offset 3
}

// 4 x 2: the lowest offset of a tall matrix is 1 - rows = -3.
//   [. 1]
//   [. .]
//   [. .]
//   [2 .]
TEST(DiaLayout, ReachesTheLowestOffsetOfATallMatrix) {
  const CsrMatrix<double> tall{4, 2, {0, 1, 1, 1, 2}, {1, 0}, {1, 2}};
  const DiaLayout<double> dia = make_dia_layout<double>(tall);
  EXPECT_THAT(dia.offsets, ElementsAre(-3, 1));
  EXPECT_THAT(dia.values, ElementsAreArray<double>({0, 0, 0, 2,     // offset -3
                                                    1, 0, 0, 0}));  // offset 1
}

TEST(DiaLayout, SumsEntriesOfOneRowAndColumn) {
  // Row 0 holds column 1 twice (not validate()d: the builder sums either way).
  const CsrMatrix<double> twice{2, 2, {0, 2, 3}, {1, 1, 0}, {0.5, 0.25, 3}};
  const DiaLayout<double> dia = make_dia_layout<double>(twice);
  EXPECT_THAT(dia.offsets, ElementsAre(-1, 1));
  EXPECT_THAT(dia.values, ElementsAre(0, 3, 0.75, 0));
}

TEST(DiaLayout, AMatrixWithoutEntriesHasNoDiagonals) {
  const DiaLayout<double> dia =
      make_dia_layout<double>(CsrMatrix<double>{3, 4, {0, 0, 0, 0}, {}, {}});
  EXPECT_EQ(dia.rows, 3);
  EXPECT_THAT(dia.offsets, IsEmpty());
  EXPECT_THAT(dia.values, IsEmpty());
}

// y = A x computed from the DIA arrays alone, as dia_kernel does (slots outside the columns
// skipped), against the double-precision reference.
TEST(DiaLayout, MultipliesLikeTheReferenceOnTheConformanceMatrices) {
  const std::uint64_t seed = testing::test_seed();
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  int checked = 0;
  for (const testing::NamedMatrix& named : testing::conformance_matrices(seed)) {
    const CsrMatrix<double>& m = named.matrix;
    // As in the conformance test, only matrices the rules would offer DIA candidates for
    // (kDiaMaxDiagonals); and few enough slots for a quick test.
    const std::int64_t diagonals = compute_cuda_dia_features(m).diagonals;
    if (diagonals > kDiaMaxDiagonals || diagonals * m.rows > 4'000'000) continue;
    SCOPED_TRACE(named.name);
    ++checked;
    const DiaLayout<double> dia = make_dia_layout<double>(m);
    std::vector<double> x(static_cast<std::size_t>(m.cols));
    for (double& v : x) v = value(rng);
    std::vector<double> expected(static_cast<std::size_t>(m.rows), 0.0);
    reference_spmv(m, x.data(), expected.data(), 1.0, 0.0);
    for (std::int64_t r = 0; r < m.rows; ++r) {
      double sum = 0, magnitude = 0;
      for (std::size_t d = 0; d < dia.offsets.size(); ++d) {
        const std::int64_t c = r + dia.offsets[d];
        if (c < 0 || c >= m.cols) continue;
        const double term =
            dia.values[d * static_cast<std::size_t>(m.rows) + static_cast<std::size_t>(r)] *
            x[static_cast<std::size_t>(c)];
        sum += term;
        magnitude += std::abs(term);
      }
      EXPECT_NEAR(sum, expected[static_cast<std::size_t>(r)], 1e-12 * (magnitude + 1e-300))
          << "row " << r;
    }
  }
  std::cout << checked << " conformance matrices of few diagonals checked, seed " << seed << "\n";
  EXPECT_GT(checked, 3);
}

}  // namespace
}  // namespace spmvd
