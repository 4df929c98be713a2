#include "bench/generators.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <string>

#include "core/error.hpp"
#include "core/fingerprint.hpp"

namespace spmvd {
namespace {

using ::testing::HasSubstr;

// One small spec per kind; the coverage test below checks this covers generator_kinds().
const std::map<std::string, std::string>& small_specs() {
  static const std::map<std::string, std::string> specs = {
      {"stencil2d", "stencil2d:n=9,points=5"},
      {"stencil3d", "stencil3d:n=6,points=27"},
      {"banded", "banded:rows=50,bandwidth=3"},
      {"random", "random:rows=60,cols=40,per_row=7"},
      {"powerlaw", "powerlaw:scale=10,edge_factor=8"},
      {"circuit", "circuit:rows=500,dense_rows=3,dense_len=100"},
      {"road", "road:rows=400,window=8"},
      {"widerows", "widerows:rows=30,cols=2000,per_row=300"},
      {"fem", "fem:blocks=40,block=3,coupling=4"},
  };
  return specs;
}

std::string error_message(const std::string& spec) {
  try {
    generate_matrix(std::string_view(spec));
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument) << spec;
    return e.what();
  }
  ADD_FAILURE() << "no error for " << spec;
  return {};
}

std::vector<ColIndex> row_columns(const CsrMatrix<double>& m, std::int64_t row) {
  return {m.col_indices.begin() + m.row_offsets[row], m.col_indices.begin() + m.row_offsets[row + 1]};
}

TEST(Generators, EveryKindHasASmallSpecInThisTest) {
  for (const auto kind : generator_kinds())
    EXPECT_TRUE(small_specs().contains(std::string(kind))) << kind;
}

TEST(Generators, EveryKindProducesAValidMatrixWithValuesInMinusOneToOne) {
  for (const auto& [kind, spec] : small_specs()) {
    SCOPED_TRACE(spec);
    const auto m = generate_matrix(std::string_view(spec));
    EXPECT_NO_THROW(validate(m));
    EXPECT_GT(m.nnz(), 0);
    for (const double v : m.values) {
      ASSERT_GE(v, -1.0);
      ASSERT_LT(v, 1.0);
    }
  }
}

TEST(Generators, SameSeedGivesSameFingerprintAndValues) {
  for (const auto& [kind, spec] : small_specs()) {
    SCOPED_TRACE(spec);
    const auto a = generate_matrix(std::string_view(spec + ",seed=7"));
    const auto b = generate_matrix(std::string_view(spec + ",seed=7"));
    EXPECT_EQ(structural_fingerprint(a), structural_fingerprint(b));
    EXPECT_EQ(a.values, b.values);
  }
}

TEST(Generators, DifferentSeedGivesDifferentStructureForRandomKinds) {
  // Stencils and bands have a fixed structure: only their values depend on the seed.
  for (const std::string kind : {"random", "powerlaw", "circuit", "road", "widerows", "fem"}) {
    const std::string& spec = small_specs().at(kind);
    SCOPED_TRACE(spec);
    EXPECT_NE(structural_fingerprint(generate_matrix(std::string_view(spec + ",seed=1"))),
              structural_fingerprint(generate_matrix(std::string_view(spec + ",seed=2"))));
  }
  const auto a = generate_matrix(std::string_view("stencil2d:n=5,seed=1"));
  const auto b = generate_matrix(std::string_view("stencil2d:n=5,seed=2"));
  EXPECT_EQ(structural_fingerprint(a), structural_fingerprint(b));
  EXPECT_NE(a.values, b.values);
}

TEST(Generators, OmittedSeedMeansSeedOne) {
  EXPECT_EQ(generate_matrix(std::string_view("road:rows=300")).values,
            generate_matrix(std::string_view("road:rows=300,seed=1")).values);
}

TEST(Stencil2d, FivePointInteriorRowHasItsFourNeighboursAndCornerHasTwo) {
  const std::int64_t n = 7;
  const auto m = generate_matrix(std::string_view("stencil2d:n=7,points=5"));
  EXPECT_EQ(m.rows, n * n);
  EXPECT_EQ(m.cols, n * n);
  EXPECT_EQ(m.nnz(), 5 * n * n - 4 * n);
  const std::int64_t centre = 3 * n + 3;  // grid point (3, 3)
  EXPECT_EQ(row_columns(m, centre),
            (std::vector<ColIndex>{2 * 7 + 3, 3 * 7 + 2, 3 * 7 + 3, 3 * 7 + 4, 4 * 7 + 3}));
  EXPECT_EQ(row_columns(m, 0), (std::vector<ColIndex>{0, 1, 7}));
  for (std::int64_t i = 1; i + 1 < n; ++i)
    for (std::int64_t j = 1; j + 1 < n; ++j) EXPECT_EQ(m.row_length(i * n + j), 5);
}

TEST(Stencil2d, NinePointHasThreeByThreeNeighbourhoods) {
  const std::int64_t n = 8;
  const auto m = generate_matrix(std::string_view("stencil2d:n=8,points=9"));
  EXPECT_EQ(m.nnz(), (3 * n - 2) * (3 * n - 2));
  EXPECT_EQ(row_columns(m, n + 1), (std::vector<ColIndex>{0, 1, 2, 8, 9, 10, 16, 17, 18}));
}

TEST(Stencil3d, SevenAndTwentySevenPointCountsMatchTheClosedForms) {
  const std::int64_t n = 6;
  const auto seven = generate_matrix(std::string_view("stencil3d:n=6,points=7"));
  EXPECT_EQ(seven.rows, n * n * n);
  EXPECT_EQ(seven.nnz(), 7 * n * n * n - 6 * n * n);
  const std::int64_t centre = (3 * n + 3) * n + 3;
  EXPECT_EQ(row_columns(seven, centre),
            (std::vector<ColIndex>{static_cast<ColIndex>(centre - n * n),
                                   static_cast<ColIndex>(centre - n), static_cast<ColIndex>(centre - 1),
                                   static_cast<ColIndex>(centre), static_cast<ColIndex>(centre + 1),
                                   static_cast<ColIndex>(centre + n),
                                   static_cast<ColIndex>(centre + n * n)}));
  const auto full = generate_matrix(std::string_view("stencil3d:n=6,points=27"));
  EXPECT_EQ(full.nnz(), (3 * n - 2) * (3 * n - 2) * (3 * n - 2));
  EXPECT_EQ(full.row_length(centre), 27);
}

TEST(Banded, EveryEntryWithinTheBandIsPresentAndNoneOutside) {
  const std::int64_t rows = 50, bandwidth = 3;
  const auto m = generate_matrix(std::string_view("banded:rows=50,bandwidth=3"));
  EXPECT_EQ(m.nnz(), rows * (2 * bandwidth + 1) - bandwidth * (bandwidth + 1));
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::int64_t first = std::max<std::int64_t>(0, r - bandwidth);
    const std::int64_t last = std::min(rows - 1, r + bandwidth);
    ASSERT_EQ(m.row_length(r), last - first + 1) << "row " << r;
    EXPECT_EQ(m.col_indices[m.row_offsets[r]], first) << "row " << r;
  }
}

TEST(RandomUniform, EveryRowHasExactlyPerRowColumns) {
  // per_row above half of cols exercises the dense (selection sampling) path too.
  for (const std::string spec : {"random:rows=60,cols=40,per_row=7", "random:rows=20,cols=40,per_row=35"}) {
    const auto m = generate_matrix(std::string_view(spec));
    EXPECT_EQ(m.cols, 40);
    for (std::int64_t r = 0; r < m.rows; ++r)
      ASSERT_EQ(m.row_length(r), spec.ends_with("=7") ? 7 : 35) << spec << " row " << r;
  }
}

TEST(Powerlaw, HasTwoToTheScaleRowsAndSkewedRowLengths) {
  const auto m = generate_matrix(std::string_view("powerlaw:scale=12,edge_factor=16"));
  EXPECT_EQ(m.rows, 4096);
  EXPECT_EQ(m.cols, 4096);
  EXPECT_LE(m.nnz(), 16 * 4096);       // duplicates merged
  EXPECT_GT(m.nnz(), 16 * 4096 / 2);   // but most R-MAT edges are distinct at this size
  std::int64_t longest = 0, empty = 0;
  for (std::int64_t r = 0; r < m.rows; ++r) {
    longest = std::max(longest, m.row_length(r));
    empty += m.row_length(r) == 0;
  }
  const double mean = static_cast<double>(m.nnz()) / static_cast<double>(m.rows);
  EXPECT_GT(static_cast<double>(longest), 10 * mean);  // a hub, as in a power-law graph
  EXPECT_GT(empty, 0);
}

TEST(Circuit, HasExactlyTheDenseRowsAndSparseRowsHoldTheDiagonal) {
  const auto m = generate_matrix(std::string_view("circuit:rows=500,dense_rows=3,dense_len=100"));
  std::int64_t dense = 0;
  for (std::int64_t r = 0; r < m.rows; ++r) {
    if (m.row_length(r) == 100) {
      ++dense;
      continue;
    }
    ASSERT_GE(m.row_length(r), 1) << "row " << r;
    ASSERT_LE(m.row_length(r), 6) << "row " << r;
    const auto cols = row_columns(m, r);
    EXPECT_TRUE(std::binary_search(cols.begin(), cols.end(), static_cast<ColIndex>(r))) << "row " << r;
  }
  EXPECT_EQ(dense, 3);
}

TEST(Road, RowsHaveTwoToFourLocalColumnsAndNoDiagonal) {
  const auto m = generate_matrix(std::string_view("road:rows=400,window=8"));
  for (std::int64_t r = 0; r < m.rows; ++r) {
    ASSERT_GE(m.row_length(r), 2) << "row " << r;
    ASSERT_LE(m.row_length(r), 4) << "row " << r;
    for (const ColIndex c : row_columns(m, r)) {
      EXPECT_NE(c, r);
      EXPECT_LE(std::abs(c - r), 8) << "row " << r;
    }
  }
}

TEST(Widerows, RowLengthsStayWithinHalfToThreeHalvesOfPerRow) {
  const auto m = generate_matrix(std::string_view("widerows:rows=30,cols=2000,per_row=300"));
  EXPECT_EQ(m.cols, 2000);
  for (std::int64_t r = 0; r < m.rows; ++r) {
    EXPECT_GE(m.row_length(r), 150) << "row " << r;
    EXPECT_LE(m.row_length(r), 450) << "row " << r;
  }
}

TEST(Fem, RowsAreAlignedDenseBlocksIncludingTheDiagonalBlock) {
  const std::int64_t block = 3, coupling = 4;
  const auto m = generate_matrix(std::string_view("fem:blocks=40,block=3,coupling=4"));
  EXPECT_EQ(m.rows, 40 * block);
  for (std::int64_t r = 0; r < m.rows; ++r) {
    const auto cols = row_columns(m, r);
    ASSERT_EQ(static_cast<std::int64_t>(cols.size()), (coupling + 1) * block) << "row " << r;
    for (std::size_t k = 0; k < cols.size(); k += block) {
      EXPECT_EQ(cols[k] % block, 0) << "row " << r;
      EXPECT_EQ(cols[k + block - 1], cols[k] + block - 1) << "row " << r;
      EXPECT_LE(std::abs(cols[k] / block - r / block), 2 * coupling) << "row " << r;
    }
    EXPECT_TRUE(std::binary_search(cols.begin(), cols.end(), static_cast<ColIndex>(r))) << "row " << r;
  }
}

TEST(GeneratorSpecErrors, NameTheOffendingKey) {
  EXPECT_EQ(error_message("stencil2d:n=abc"), "stencil2d: key 'n' is not an integer: 'abc'");
  EXPECT_EQ(error_message("stencil2d:n=10,points=7"), "stencil2d: key 'points' must be 5 or 9, got 7");
  EXPECT_EQ(error_message("banded:rows=10"), "banded: missing key 'bandwidth'");
  EXPECT_EQ(error_message("banded:rows=10,bandwidth=10"),
            "banded: key 'bandwidth' must be in [0, 9], got 10");
  EXPECT_EQ(error_message("road:rows=10,lanes=2"),
            "road: unknown key 'lanes' (expected rows, window, seed)");
  EXPECT_EQ(error_message("fem:blocks=4,block=2,coupling=1,block=3"), "fem: key 'block' given twice");
  EXPECT_EQ(error_message("random:rows=10,cols"), "random: parameter 'cols' is not key=value");
  EXPECT_THAT(error_message("spiral:n=3"), HasSubstr("unknown kind 'spiral'"));
  EXPECT_THAT(error_message("stencil2d"), HasSubstr("expected kind:key=value"));
  EXPECT_THAT(error_message("random:rows=10,cols=5,per_row=6"), HasSubstr("key 'per_row'"));
}

TEST(GeneratorSpec, LooksLikeASpecOnlyWithAKnownKindAndColon) {
  EXPECT_TRUE(looks_like_generator_spec("road:rows=10"));
  EXPECT_FALSE(looks_like_generator_spec("road.mtx.gz"));
  EXPECT_FALSE(looks_like_generator_spec("data/road:x.mtx"));
}

TEST(ReplicateBlockDiagonal, CopiesATwoByTwoExactly) {
  CsrMatrix<double> m{2, 2, {0, 2, 3}, {0, 1, 1}, {1.0, 2.0, 3.0}};
  const auto r = replicate_block_diagonal(m, 3);
  EXPECT_EQ(r.rows, 6);
  EXPECT_EQ(r.cols, 6);
  EXPECT_EQ(r.row_offsets, (std::vector<RowOffset>{0, 2, 3, 5, 6, 8, 9}));
  EXPECT_EQ(r.col_indices, (std::vector<ColIndex>{0, 1, 1, 2, 3, 3, 4, 5, 5}));
  EXPECT_EQ(r.values, (std::vector<double>{1, 2, 3, 1, 2, 3, 1, 2, 3}));
  EXPECT_NO_THROW(validate(r));
}

TEST(ReplicateBlockDiagonal, RefusesZeroCopiesAndOverflowingDimensions) {
  CsrMatrix<double> m{2, 2, {0, 2, 3}, {0, 1, 1}, {1.0, 2.0, 3.0}};
  EXPECT_THROW(replicate_block_diagonal(m, 0), Error);
  try {
    replicate_block_diagonal(m, std::int64_t{1} << 31);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    EXPECT_THAT(e.what(), HasSubstr("exceed the 2^31-1 dimension limit"));
  }
}

// P A P^T: entry (i, j) of A is entry (p(i), p(j)) of the result, so every value is where
// the permutation sends it and the row lengths are permuted with the rows.
TEST(RenumberSymmetric, MovesEveryEntryToItsPermutedRowAndColumn) {
  const auto m = generate_matrix("random:rows=300,cols=300,per_row=7,seed=3");
  const auto r = renumber_symmetric(m, 42);
  EXPECT_NO_THROW(validate(r));
  ASSERT_EQ(r.nnz(), m.nnz());
  // Recover p from the row lengths and the values (random doubles, distinct in practice).
  std::map<double, std::pair<std::int64_t, ColIndex>> where;
  for (std::int64_t i = 0; i < r.rows; ++i)
    for (auto k = r.row_offsets[i]; k < r.row_offsets[i + 1]; ++k) where[r.values[k]] = {i, r.col_indices[k]};
  std::vector<std::int64_t> p(static_cast<std::size_t>(m.rows), -1);
  std::set<std::int64_t> images;
  bool moved = false;
  for (std::int64_t i = 0; i < m.rows; ++i) {
    for (auto k = m.row_offsets[i]; k < m.row_offsets[i + 1]; ++k) {
      const auto [row, col] = where.at(m.values[k]);
      if (p[i] < 0) p[i] = row;
      EXPECT_EQ(p[i], row) << "row " << i << " split across rows";
      const auto j = static_cast<std::size_t>(m.col_indices[k]);
      if (p[j] < 0) p[j] = col;
      EXPECT_EQ(p[j], col) << "column " << j << " renumbered differently from its row";
    }
    images.insert(p[i]);
    moved = moved || p[i] != i;
  }
  EXPECT_EQ(images.size(), static_cast<std::size_t>(m.rows)) << "not a permutation";
  EXPECT_TRUE(moved);
  EXPECT_EQ(renumber_symmetric(m, 42).col_indices, r.col_indices) << "not deterministic";
}

TEST(RenumberSymmetric, RefusesANonSquareMatrix) {
  EXPECT_THROW(renumber_symmetric(generate_matrix("random:rows=20,cols=30,per_row=2"), 1), Error);
}

}  // namespace
}  // namespace spmvd
