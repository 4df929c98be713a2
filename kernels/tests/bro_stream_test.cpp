// BRO streams (paper 001, common/bro_stream.hpp): encode/decode round trips on hand-made rows
// (every bit width 1..32, empty rows, a slice of one row, a last slice shorter than h), the
// paper's example matrix A counted by hand, and a host multiply over the built BRO-ELL and
// BRO-COO arrays against the CSR reference on the conformance matrices (seed printed).

#include "kernels/formats/common/bro_stream.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <iostream>
#include <numeric>
#include <random>
#include <vector>

#include "core/error.hpp"
#include "kernels/formats/common/bro_decode.hpp"
#include "kernels/tests/test_matrices.hpp"

namespace spmvd {
namespace {

// The paper's Sec. 2 example A (0-based columns).
//   [3 0 2 0 0]
//   [2 6 5 4 1]
//   [0 1 9 0 7]
//   [0 0 0 8 3]
CsrMatrix<double> paper_matrix_a() {
  return CsrMatrix<double>{4,
                           5,
                           {0, 2, 7, 10, 12},
                           {0, 2, 0, 1, 2, 3, 4, 1, 2, 4, 3, 4},
                           {3, 2, 2, 6, 5, 4, 1, 1, 9, 7, 8, 3}};
}

std::vector<ColIndex> csr_row(const CsrMatrix<double>& m, std::int64_t r) {
  return {m.col_indices.begin() + m.row_offsets[static_cast<std::size_t>(r)],
          m.col_indices.begin() + m.row_offsets[static_cast<std::size_t>(r + 1)]};
}

std::vector<double> reference(const CsrMatrix<double>& m, const std::vector<double>& x) {
  std::vector<double> y(static_cast<std::size_t>(m.rows), 0.0);
  for (std::int64_t r = 0; r < m.rows; ++r)
    for (auto k = m.row_offsets[static_cast<std::size_t>(r)];
         k < m.row_offsets[static_cast<std::size_t>(r + 1)]; ++k)
      y[static_cast<std::size_t>(r)] +=
          m.values[static_cast<std::size_t>(k)] *
          x[static_cast<std::size_t>(m.col_indices[static_cast<std::size_t>(k)])];
  return y;
}

std::vector<double> random_x(std::int64_t size, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  std::vector<double> x(static_cast<std::size_t>(size));
  for (double& v : x) v = value(rng);
  return x;
}

void expect_near_all(const std::vector<double>& expected, const std::vector<double>& actual) {
  ASSERT_EQ(expected.size(), actual.size());
  for (std::size_t i = 0; i < expected.size(); ++i)
    EXPECT_NEAR(actual[i], expected[i], 1e-12 * (1.0 + std::abs(expected[i]))) << "row " << i;
}

TEST(BroStream, BitsForCountsTheBitsOfTheValue) {
  EXPECT_EQ(bro::bits_for(0), 0u);
  EXPECT_EQ(bro::bits_for(1), 1u);
  EXPECT_EQ(bro::bits_for(2), 2u);
  EXPECT_EQ(bro::bits_for(255), 8u);
  EXPECT_EQ(bro::bits_for(256), 9u);
  EXPECT_EQ(bro::bits_for(std::uint64_t{1} << 31), 32u);
  EXPECT_EQ(bro::bits_for(0xFFFFFFFFu), 32u);
}

// Paper Fig. 1 on A with one slice: deltas (first one + 1) are
//   row 0: 1 2 / row 1: 1 1 1 1 1 / row 2: 2 1 2 / row 3: 4 1
// so bit_alloc = {3, 2, 2, 1, 1} (9 bits, one 32-bit word per row), num_col 5.
TEST(BroEll, PaperExampleMatrixHasTheHandCountedBitAllocation) {
  const auto layout = bro::make_bro_ell_layout<double>(paper_matrix_a(), 32, 1);
  EXPECT_EQ(layout.bit_alloc, (std::vector<std::uint8_t>{3, 2, 2, 1, 1}));
  EXPECT_EQ(layout.col_offsets, (std::vector<std::int64_t>{0, 5}));
  EXPECT_EQ(layout.word_offsets, (std::vector<std::int64_t>{0, 4}));
  // Row 2 = deltas 2,1,2 at widths 3,2,2: 0b10'01'010 = 2 | 1<<3 | 2<<5.
  EXPECT_EQ(layout.stream[2], 2u | (1u << 3) | (2u << 5));
  // Values column-major within the slice: column 1 holds rows' second entries 2, 6, 9, 3.
  EXPECT_EQ(layout.values[4 + 0], 2.0);
  EXPECT_EQ(layout.values[4 + 1], 6.0);
  EXPECT_EQ(layout.values[4 + 2], 9.0);
  EXPECT_EQ(layout.values[4 + 3], 3.0);
  for (std::int64_t r = 0; r < 4; ++r)
    EXPECT_EQ(bro::decode_bro_ell_row(layout, r), csr_row(paper_matrix_a(), r));
}

// A slice of one row whose deltas need exactly `width` bits, for every width 1..32, in both
// symbol sizes: columns a = 2^(w-1) - 1 (delta a + 1 = 2^(w-1)) and a + 2^(w-1) (below 32
// bits only: columns are 31-bit), so bit_alloc = {w, w} or {32}; two values straddle a word
// from w = 17 on.
TEST(BroEll, EveryBitWidthFrom1To32RoundTripsInASliceOfOneRow) {
  for (const std::uint32_t words : {1u, 4u})
    for (std::uint32_t width = 1; width <= 32; ++width) {
      SCOPED_TRACE("width " + std::to_string(width) + ", words per symbol " +
                   std::to_string(words));
      const std::int64_t step = std::int64_t{1} << (width - 1);
      std::vector<ColIndex> columns{static_cast<ColIndex>(step - 1)};
      if (width < 32) columns.push_back(static_cast<ColIndex>(2 * step - 1));
      const auto n = static_cast<RowOffset>(columns.size());
      const CsrMatrix<double> m{
          1, 2 * step, {0, n}, columns, std::vector<double>(columns.size(), 1.5)};
      const auto layout = bro::make_bro_ell_layout<double>(m, 32, words);
      EXPECT_EQ(layout.bit_alloc,
                std::vector<std::uint8_t>(columns.size(), static_cast<std::uint8_t>(width)));
      const std::size_t bits = width * columns.size();
      const std::size_t expected_words = (bits + 31) / 32;  // no padding beyond a word
      EXPECT_EQ(layout.stream.size(), expected_words);
      EXPECT_EQ(bro::decode_bro_ell_row(layout, 0), columns);
    }
}

// 128-bit symbols without padding: 3 rows of 10 entries of 16-bit deltas (160 bits, 5 words a
// row). Words 0-3 of row t are one 16-byte symbol at t*4; word 4 follows all the symbols as
// a 32-bit symbol at 3*4 + t. Row t's columns are (j+1)*2^15 - 1 - t: deltas 2^15 - t, then 2^15.
TEST(BroEll, VectorSymbolsThenAScalarTailAreLaidOutAsDocumented) {
  CsrMatrix<double> m{3, 11 * 32768, {0}, {}, {}};
  for (std::int32_t t = 0; t < 3; ++t) {
    for (std::int32_t j = 0; j < 10; ++j) {
      m.col_indices.push_back((j + 1) * 32768 - 1 - t);
      m.values.push_back(1.0);
    }
    m.row_offsets.push_back(m.nnz());
  }
  const auto layout = bro::make_bro_ell_layout<double>(m, 32, 4);
  ASSERT_EQ(layout.stream.size(), 15u);
  for (std::uint32_t t = 0; t < 3; ++t) {
    EXPECT_EQ(layout.stream[t * 4], (32768u - t) | (32768u << 16)) << "row " << t;
    EXPECT_EQ(layout.stream[t * 4 + 3], 32768u | (32768u << 16)) << "row " << t;
    EXPECT_EQ(layout.stream[12 + t], 32768u | (32768u << 16)) << "row " << t;
    EXPECT_EQ(bro::decode_bro_ell_row(layout, t), csr_row(m, t));
  }
  EXPECT_EQ(bro::bro_ell_word_index(4, 2, 3, 5, 4), 14);
  EXPECT_EQ(bro::bro_ell_word_index(4, 2, 3, 5, 1), 14);  // 32-bit symbols: q * h + t
  EXPECT_EQ(bro::bro_ell_word_index(1, 2, 3, 5, 1), 5);
  EXPECT_EQ(bro::bro_ell_word_index(1, 2, 3, 5, 4), 9);
}

// Rows whose widths straddle words: 3 entries of 31 bits and one of 1 bit per row, 20 rows.
TEST(BroEll, ValuesStraddlingWordsRoundTrip) {
  CsrMatrix<double> m{20, std::int64_t{1} << 31, {0}, {}, {}};
  for (std::int64_t r = 0; r < m.rows; ++r) {
    const ColIndex base = static_cast<ColIndex>(r);
    for (const ColIndex c :
         {base, base + (1 << 30), base + (1 << 30) + 1, ColIndex{2147483000} + base}) {
      m.col_indices.push_back(c);
      m.values.push_back(1.0);
    }
    m.row_offsets.push_back(m.nnz());
  }
  for (const std::uint32_t words : {1u, 4u}) {
    const auto layout = bro::make_bro_ell_layout<double>(m, 32, words);
    for (std::int64_t r = 0; r < m.rows; ++r)
      EXPECT_EQ(bro::decode_bro_ell_row(layout, r), csr_row(m, r));
  }
}

TEST(BroEll, EmptyRowsDecodeEmptyAndAllEmptyHasNoStream) {
  const CsrMatrix<double> m{4, 10, {0, 0, 3, 3, 3}, {1, 4, 9}, {1, 2, 3}};
  const auto layout = bro::make_bro_ell_layout<double>(m, 32, 1);
  EXPECT_TRUE(bro::decode_bro_ell_row(layout, 0).empty());
  EXPECT_EQ(bro::decode_bro_ell_row(layout, 1), (std::vector<ColIndex>{1, 4, 9}));
  EXPECT_TRUE(bro::decode_bro_ell_row(layout, 3).empty());
  const CsrMatrix<double> none{3, 10, {0, 0, 0, 0}, {}, {}};
  const auto empty = bro::make_bro_ell_layout<double>(none, 32, 4);
  EXPECT_TRUE(empty.stream.empty());
  EXPECT_TRUE(empty.bit_alloc.empty());
  EXPECT_EQ(empty.col_offsets, (std::vector<std::int64_t>{0, 0}));
}

TEST(BroEll, RejectsSliceHeightsThatAreNotWarpMultiplesAndUnsortedRows) {
  try {
    bro::bro_ell_size(paper_matrix_a(), 48, 1);
    FAIL() << "no throw";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "bro-ell: slice height 48 is not a positive multiple of 32");
  }
  EXPECT_THROW(bro::bro_ell_size(paper_matrix_a(), 32, 2), Error);
  const CsrMatrix<double> unsorted{1, 5, {0, 2}, {3, 1}, {1, 1}};
  try {
    bro::bro_ell_size(unsorted, 32, 1);
    FAIL() << "no throw";
  } catch (const Error& e) {
    EXPECT_STREQ(
        e.what(),
        "bro: row 0: column 1 does not follow column 3 (columns must be strictly increasing)");
  }
}

// Every conformance matrix (empty rows, a long row, no rows, a last slice shorter than h ...),
// every slice height and symbol size, 1 and 4 sub-rows a row: sizes equal the built layout,
// every row decodes to its CSR columns, and the host multiply equals the CSR reference.
TEST(BroEll, HostMultiplyOverTheBuiltArraysEqualsCsrOnRandomMatrices) {
  const std::uint64_t seed = testing::test_seed();
  std::cout << "seed " << seed << " (SPMVD_TEST_SEED)\n";
  std::mt19937_64 rng(seed);
  for (const auto& [name, m] : testing::conformance_matrices(seed)) {
    if (m.rows > 5000) continue;  // the 200000-row matrix: the same code, only slower
    const std::vector<double> x = random_x(m.cols, rng);
    const std::vector<double> expected = reference(m, x);
    for (const std::uint32_t h : {32u, 64u, 256u})
      for (const std::uint32_t words : {1u, 4u})
        for (const std::uint32_t parts : {1u, 4u}) {
          SCOPED_TRACE(name + " h " + std::to_string(h) + " words " + std::to_string(words) +
                       " parts " + std::to_string(parts));
          const CsrMatrix<double> rows = parts == 1 ? m : bro::split_rows(m, parts);
          const auto layout = bro::make_bro_ell_layout<double>(rows, h, words);
          const bro::BroEllSize size = bro::bro_ell_size(rows, h, words);
          EXPECT_EQ(size.slices, layout.slices());
          EXPECT_EQ(size.stream_words, static_cast<std::int64_t>(layout.stream.size()));
          EXPECT_EQ(size.columns, static_cast<std::int64_t>(layout.bit_alloc.size()));
          EXPECT_EQ(size.value_slots, static_cast<std::int64_t>(layout.values.size()));
          for (std::int64_t r = 0; r < rows.rows; ++r)
            ASSERT_EQ(bro::decode_bro_ell_row(layout, r), csr_row(rows, r)) << "stream row " << r;
          const std::vector<double> y_rows = bro::multiply_bro_ell(layout, x);
          std::vector<double> y(static_cast<std::size_t>(m.rows), 0.0);
          for (std::size_t g = 0; g < y_rows.size(); ++g) y[g / parts] += y_rows[g];
          expect_near_all(expected, y);
        }
  }
}

// The kernel's own decode (bro_decode.hpp, which the BRO-ELL kernel calls per thread) run on
// the host over the built arrays, with the kernel's indexing of slices, for every stream row:
// row sums (sub-rows added as the shuffles add them) equal the CSR reference.
template <typename Value, int kWords>
std::vector<double> kernel_decode_multiply(const bro::BroEllLayout<Value>& l, std::uint32_t parts,
                                           std::int64_t rows, const std::vector<Value>& x) {
  std::vector<double> y(static_cast<std::size_t>(rows), 0.0);
  const std::int64_t h = l.slice_height;
  for (std::int64_t g = 0; g < l.rows; ++g) {
    const std::int64_t s = g / h;
    const std::int64_t t = g - s * h;
    const std::int64_t height = std::min(h, l.rows - s * h);
    const std::int64_t first_col = l.col_offsets[static_cast<std::size_t>(s)];
    const std::int64_t row_words = (l.word_offsets[static_cast<std::size_t>(s + 1)] -
                                    l.word_offsets[static_cast<std::size_t>(s)]) /
                                   height;
    y[static_cast<std::size_t>(g / parts)] += bro::bro_ell_row_sum<Value, kWords>(
        l.stream.data() + l.word_offsets[static_cast<std::size_t>(s)], height, t, row_words,
        l.bit_alloc.data() + first_col, l.col_offsets[static_cast<std::size_t>(s + 1)] - first_col,
        l.values.data() + first_col * h, x.data());
  }
  return y;
}

TEST(BroEll, KernelDecodeOverTheBuiltArraysEqualsCsrOnRandomMatrices) {
  const std::uint64_t seed = testing::test_seed();
  std::cout << "seed " << seed << " (SPMVD_TEST_SEED)\n";
  std::mt19937_64 rng(seed);
  for (const auto& [name, m] : testing::conformance_matrices(seed)) {
    const std::vector<double> x = random_x(m.cols, rng);
    const std::vector<double> expected = reference(m, x);
    for (const std::uint32_t h : {32u, 256u})
      for (const std::uint32_t parts : {1u, 4u}) {
        SCOPED_TRACE(name + " h " + std::to_string(h) + " parts " + std::to_string(parts));
        const CsrMatrix<double> rows = parts == 1 ? m : bro::split_rows(m, parts);
        expect_near_all(expected,
                        kernel_decode_multiply<double, 1>(
                            bro::make_bro_ell_layout<double>(rows, h, 1), parts, m.rows, x));
        expect_near_all(expected,
                        kernel_decode_multiply<double, 4>(
                            bro::make_bro_ell_layout<double>(rows, h, 4), parts, m.rows, x));
      }
  }
}

// The BRO-COO kernel's row decode, a warp emulated on the host: per interval 32 lane readers
// (bro_decode.hpp's StreamReader<1>, as the kernel builds them), one read per lane per round,
// lanes past the interval's end included; the rows of the entries equal COO's.
TEST(BroCoo, KernelLaneDecodeEqualsCooRows) {
  for (const auto& [name, m] : testing::conformance_matrices(testing::test_seed())) {
    SCOPED_TRACE(name);
    std::vector<std::int32_t> expected;
    for (std::int64_t r = 0; r < m.rows; ++r)
      expected.insert(expected.end(), static_cast<std::size_t>(m.row_length(r)),
                      static_cast<std::int32_t>(r));
    for (const std::uint32_t rounds : {1u, 8u, 32u}) {
      const auto l = bro::make_bro_coo_layout<double>(m, rounds);
      const std::int64_t per_interval = std::int64_t{32} * rounds;
      std::vector<std::int32_t> decoded(static_cast<std::size_t>(m.nnz()), -1);
      for (std::int64_t i = 0; i < l.intervals(); ++i) {
        const std::int64_t begin = i * per_interval;
        const std::int64_t end = std::min(begin + per_interval, l.nnz);
        for (std::int64_t lane = 0; lane < 32; ++lane) {
          bro::BitReader<bro::ScalarWords> reader{
              {l.stream.data() + l.word_offsets[static_cast<std::size_t>(i)] + lane, 32}};
          std::int32_t row = l.first_rows[static_cast<std::size_t>(i)];
          for (std::int64_t base = begin; base < end; base += 32) {
            row += static_cast<std::int32_t>(reader.read(l.bits[static_cast<std::size_t>(i)]));
            if (base + lane < end) decoded[static_cast<std::size_t>(base + lane)] = row;
          }
        }
      }
      EXPECT_EQ(decoded, expected) << "rounds " << rounds;
    }
  }
}

// Paper Sec. 2's row_idx with one interval of one round: lane l holds entry l, its delta
// against the first row is its row (0..3), so the interval is 2 bits wide.
TEST(BroCoo, PaperExampleRowIndicesAreTwoBitsWide) {
  const auto layout = bro::make_bro_coo_layout<double>(paper_matrix_a(), 1);
  EXPECT_EQ(layout.bits, (std::vector<std::uint8_t>{2}));
  EXPECT_EQ(layout.first_rows, (std::vector<std::int32_t>{0}));
  EXPECT_EQ(layout.last_rows, (std::vector<std::int32_t>{3}));
  EXPECT_EQ(layout.word_offsets, (std::vector<std::int64_t>{0, 32}));
  EXPECT_EQ(bro::decode_bro_coo_rows(layout),
            (std::vector<std::int32_t>{0, 0, 1, 1, 1, 1, 1, 2, 2, 2, 3, 3}));
}

TEST(BroCoo, WideRowJumpsRoundTrip) {
  // Entries in rows 0, 5, 5 and 2^22 + 7: the last lane's delta needs 23 bits.
  const std::int64_t rows = (std::int64_t{1} << 22) + 8;
  CsrMatrix<double> m{rows, 4, {}, {1, 2, 3, 0}, {1, 2, 3, 4}};
  m.row_offsets.assign(static_cast<std::size_t>(rows + 1), 0);
  for (std::int64_t r = 1; r <= rows; ++r)
    m.row_offsets[static_cast<std::size_t>(r)] = r <= 5 ? 1 : r <= rows - 1 ? 3 : 4;
  const auto layout = bro::make_bro_coo_layout<double>(m, 1);
  EXPECT_EQ(bro::decode_bro_coo_rows(layout),
            (std::vector<std::int32_t>{0, 5, 5, static_cast<std::int32_t>(rows - 1)}));
  EXPECT_EQ(layout.bits, (std::vector<std::uint8_t>{23}));
}

TEST(BroCoo, HostMultiplyOverTheBuiltArraysEqualsCsrOnRandomMatrices) {
  const std::uint64_t seed = testing::test_seed();
  std::cout << "seed " << seed << " (SPMVD_TEST_SEED)\n";
  std::mt19937_64 rng(seed);
  for (const auto& [name, m] : testing::conformance_matrices(seed)) {
    const std::vector<double> x = random_x(m.cols, rng);
    const std::vector<double> expected = reference(m, x);
    for (const std::uint32_t rounds : {1u, 8u, 32u}) {
      SCOPED_TRACE(name + " rounds " + std::to_string(rounds));
      const auto layout = bro::make_bro_coo_layout<double>(m, rounds);
      const bro::BroCooSize size = bro::bro_coo_size(m, rounds);
      EXPECT_EQ(size.intervals, layout.intervals());
      EXPECT_EQ(size.stream_words, static_cast<std::int64_t>(layout.stream.size()));
      std::vector<std::int32_t> rows;
      for (std::int64_t r = 0; r < m.rows; ++r)
        rows.insert(rows.end(), static_cast<std::size_t>(m.row_length(r)),
                    static_cast<std::int32_t>(r));
      ASSERT_EQ(bro::decode_bro_coo_rows(layout), rows);
      expect_near_all(expected, bro::multiply_bro_coo(layout, m.rows, x));
    }
  }
}

TEST(BroRows, PermutationRoundTripsAndBadOrdersAreRejected) {
  const CsrMatrix<double> m = paper_matrix_a();
  const std::vector<std::int32_t> order{2, 0, 3, 1};
  const CsrMatrix<double> permuted = bro::permute_rows(m, order);
  EXPECT_EQ(csr_row(permuted, 0), csr_row(m, 2));
  std::vector<std::int32_t> inverse(order.size());
  for (std::size_t i = 0; i < order.size(); ++i)
    inverse[static_cast<std::size_t>(order[i])] = static_cast<std::int32_t>(i);
  const CsrMatrix<double> back = bro::permute_rows(permuted, inverse);
  EXPECT_EQ(back.row_offsets, m.row_offsets);
  EXPECT_EQ(back.col_indices, m.col_indices);
  EXPECT_EQ(back.values, m.values);
  try {
    bro::permute_rows(m, std::vector<std::int32_t>{0, 1, 1, 3});
    FAIL() << "no throw";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "bro: row order entry 2 (1) is out of range or repeated");
  }
  EXPECT_THROW(bro::permute_rows(m, std::vector<std::int32_t>{0, 1, 2}), Error);
}

TEST(BroRows, LeadingAndTrailingEntriesPartitionEveryRow) {
  const CsrMatrix<double> m = paper_matrix_a();
  const CsrMatrix<double> lead = bro::leading_entries(m, 3);
  const CsrMatrix<double> tail = bro::trailing_entries(m, 3);
  EXPECT_EQ(lead.row_offsets, (std::vector<RowOffset>{0, 2, 5, 8, 10}));
  EXPECT_EQ(tail.row_offsets, (std::vector<RowOffset>{0, 0, 2, 2, 2}));
  EXPECT_EQ(tail.col_indices, (std::vector<ColIndex>{3, 4}));
  const CsrMatrix<double> split = bro::split_rows(m, 2);
  EXPECT_EQ(split.rows, 8);
  EXPECT_EQ(split.row_offsets, (std::vector<RowOffset>{0, 1, 2, 5, 7, 9, 10, 11, 12}));
}

}  // namespace
}  // namespace spmvd
