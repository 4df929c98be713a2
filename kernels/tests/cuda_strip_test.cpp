// cuda_strip (paper 004 Sec. 5): the host layout against a multiply over its own arrays, the
// sort, the rules, and the separator chosen against hand-written part predictions.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <iostream>
#include <limits>
#include <numeric>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/part_features.hpp"
#include "core/plan.hpp"
#include "kernels/formats/common/sell_layout.hpp"
#include "kernels/formats/cuda_bce/bce_row_runs.hpp"
#include "kernels/formats/cuda_csr_vector/cuda_csr_vector_rules.hpp"
#include "kernels/formats/cuda_ell/cuda_ell_rules.hpp"
#include "kernels/formats/cuda_sell/cuda_sell_features.hpp"
#include "kernels/formats/cuda_strip/cuda_strip_rules.hpp"
#include "kernels/formats/cuda_strip/strip_layout.hpp"
#include "kernels/tests/hand_written.hpp"
#include "models/locality.hpp"
#include "tuner/feature_extraction.hpp"

namespace spmvd {
namespace {

// ---- the layout ---------------------------------------------------------------------------

std::uint64_t seed_of_this_run() {
  if (const char* text = std::getenv("SPMVD_TEST_SEED")) return std::strtoull(text, nullptr, 10);
  return 20261123;
}

// rows x cols, row r of length_of(r) entries (at most cols) in distinct sorted columns, values
// in [-1, 1].
CsrMatrix<double> random_matrix(std::int64_t rows, std::int64_t cols,
                                const std::function<std::int64_t(std::int64_t)>& length_of,
                                std::mt19937_64& rng) {
  CsrMatrix<double> m{rows, cols, {0}, {}, {}};
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  std::uniform_int_distribution<ColIndex> column(0, static_cast<ColIndex>(cols - 1));
  std::vector<ColIndex> row;
  for (std::int64_t r = 0; r < rows; ++r) {
    const auto length = static_cast<std::size_t>(std::min(length_of(r), cols));
    row.clear();
    while (row.size() < length) {  // draw, then drop repeats, until the row is full
      while (row.size() < length) row.push_back(column(rng));
      std::sort(row.begin(), row.end());
      row.erase(std::unique(row.begin(), row.end()), row.end());
    }
    for (const ColIndex c : row) {
      m.col_indices.push_back(c);
      m.values.push_back(value(rng));
    }
    m.row_offsets.push_back(static_cast<RowOffset>(m.col_indices.size()));
  }
  validate(m);
  return m;
}

// Each row 0..max_length entries, a quarter of them empty; row long_row (if any) of
// long_length.
CsrMatrix<double> random_matrix(std::int64_t rows, std::int64_t cols, std::int64_t max_length,
                                std::int64_t long_row, std::int64_t long_length,
                                std::mt19937_64& rng) {
  std::mt19937_64 lengths(rng());
  return random_matrix(
      rows, cols,
      [&](std::int64_t r) -> std::int64_t {
        if (r == long_row) return long_length;
        if (std::uniform_int_distribution<int>(0, 3)(lengths) == 0) return 0;
        return std::uniform_int_distribution<std::int64_t>(0, max_length)(lengths);
      },
      rng);
}

// y = alpha A x + beta y over the layout's own arrays, as the two kernels read them: the CSR
// part by its offsets, the ELL part column-major up to each row's length, each result written
// to the caller's row through the permutation (beta == 0: y write-only).
//
// The first block_rows CSR rows as the block kernel reads them (block_size threads a row):
// thread k's entries k, k + block_size, ...; each warp's 32 sums, then the warps' sums.
void layout_multiply(const StripLayout<double>& l, const std::vector<double>& x,
                     std::vector<double>& y, double alpha, double beta,
                     std::int64_t block_rows = 0, std::int64_t block_size = 256) {
  const auto store = [&](std::int64_t sorted_row, double sum) {
    double& out = y[static_cast<std::size_t>(l.permutation[static_cast<std::size_t>(sorted_row)])];
    out = beta == 0.0 ? alpha * sum : alpha * sum + beta * out;
  };
  for (std::int64_t i = 0; i < block_rows; ++i) {
    std::vector<double> thread_sums(static_cast<std::size_t>(block_size), 0.0);
    for (std::int64_t t = 0; t < block_size; ++t)
      for (std::int64_t k = l.csr_row_offsets[i] + t; k < l.csr_row_offsets[i + 1];
           k += block_size)
        thread_sums[t] += l.csr_values[k] * x[l.csr_col_indices[k]];
    double sum = 0.0;
    for (std::int64_t warp = 0; warp < block_size / 32; ++warp)
      sum += std::accumulate(thread_sums.begin() + warp * 32,
                             thread_sums.begin() + (warp + 1) * 32, 0.0);
    store(i, sum);
  }
  for (std::int64_t i = block_rows; i < l.separator; ++i) {
    double sum = 0.0;
    for (std::int64_t k = l.csr_row_offsets[i]; k < l.csr_row_offsets[i + 1]; ++k)
      sum += l.csr_values[k] * x[l.csr_col_indices[k]];
    store(i, sum);
  }
  const std::int64_t ell_rows = l.ell_rows();
  for (std::int64_t i = 0; i < ell_rows; ++i) {
    double sum = 0.0;
    std::int64_t slot = i;
    for (std::int32_t j = 0; j < l.ell_lengths[i]; ++j, slot += ell_rows)
      sum += l.ell_values[slot] * x[l.ell_col_indices[slot]];
    store(l.separator + i, sum);
  }
}

void expect_layout_multiplies_like_the_matrix(const CsrMatrix<double>& m, std::int64_t separator,
                                              std::mt19937_64& rng, std::int64_t block_rows = 0,
                                              std::int64_t block_size = 256) {
  SCOPED_TRACE("separator " + std::to_string(separator) + " of " + std::to_string(m.rows) +
               ", block rows " + std::to_string(block_rows) + " of " +
               std::to_string(block_size) + " threads");
  const StripLayout<double> l = make_strip_layout<double>(m, separator);
  ASSERT_EQ(l.csr_row_offsets.size(), static_cast<std::size_t>(separator) + 1);
  ASSERT_EQ(l.ell_lengths.size(), static_cast<std::size_t>(m.rows - separator));
  ASSERT_EQ(l.ell_col_indices.size(), static_cast<std::size_t>(l.ell_rows() * l.ell_width));
  ASSERT_EQ(l.ell_values.size(), l.ell_col_indices.size());
  // The ELL part is as wide as its first row, every slot past a row's length padding.
  if (l.ell_rows() > 0) {
    EXPECT_EQ(l.ell_width, l.ell_lengths.front());
  }
  for (std::int64_t i = 0; i < l.ell_rows(); ++i)
    for (std::int64_t j = l.ell_lengths[i]; j < l.ell_width; ++j) {
      EXPECT_EQ(l.ell_col_indices[j * l.ell_rows() + i], kPaddingColumn);
      EXPECT_EQ(l.ell_values[j * l.ell_rows() + i], 0.0);
    }
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  std::vector<double> x(static_cast<std::size_t>(m.cols));
  for (double& v : x) v = value(rng);
  for (const auto& [alpha, beta] : {std::pair{1.5, 0.0}, std::pair{-0.75, 1.25}}) {
    std::vector<double> y0(static_cast<std::size_t>(m.rows));
    for (double& v : y0) v = beta == 0.0 ? std::nan("") : value(rng);
    std::vector<double> expected = y0;
    if (beta == 0.0) std::fill(expected.begin(), expected.end(), 0.0);
    reference_spmv(m, x.data(), expected.data(), alpha, beta);
    std::vector<double> got = y0;
    layout_multiply(l, x, got, alpha, beta, block_rows, block_size);
    for (std::int64_t r = 0; r < m.rows; ++r)
      ASSERT_NEAR(got[r], expected[r], 1e-12 * (1.0 + std::abs(expected[r])))
          << "row " << r << " (length " << m.row_length(r) << "), alpha " << alpha << " beta "
          << beta;
  }
}

TEST(CudaStripLayout, MultipliesLikeTheMatrixAtEverySeparator) {
  const std::uint64_t seed = seed_of_this_run();
  std::cout << "cuda_strip layout: seed " << seed << " (set SPMVD_TEST_SEED to repeat)\n";
  std::mt19937_64 rng(seed);
  for (int trial = 0; trial < 6; ++trial) {
    const std::int64_t rows = std::uniform_int_distribution<std::int64_t>(1, 300)(rng);
    const std::int64_t cols = std::uniform_int_distribution<std::int64_t>(1, 3000)(rng);
    // Every other matrix has one very long row among short and empty ones.
    const std::int64_t long_row = trial % 2 == 0 ? rows / 2 : -1;
    const CsrMatrix<double> m = random_matrix(rows, cols, 12, long_row, 2500, rng);
    SCOPED_TRACE("trial " + std::to_string(trial) + ": " + std::to_string(rows) + " x " +
                 std::to_string(cols));
    for (const std::int64_t separator :
         {std::int64_t{0}, std::int64_t{1}, rows / 3, rows / 2, rows - 1, rows})
      expect_layout_multiplies_like_the_matrix(m, std::clamp<std::int64_t>(separator, 0, rows),
                                               rng);
  }
}

// The hopper variant's block rows read the same CSR part (its first rows, a block each): the
// block kernel's tiling and two-level reduction over the layout equal the matrix, for any
// number of block rows up to the separator and each compiled block size.
TEST(CudaStripLayout, BlockRowsMultiplyLikeTheMatrix) {
  std::mt19937_64 rng(seed_of_this_run() + 3);
  for (int trial = 0; trial < 4; ++trial) {
    const std::int64_t rows = std::uniform_int_distribution<std::int64_t>(40, 300)(rng);
    // A few rows of 600-2500 entries (longer than any block, and not a multiple of it) among
    // short ones, circuit-like.
    std::mt19937_64 lengths(rng());
    const CsrMatrix<double> m = random_matrix(
        rows, 3000,
        [&](std::int64_t r) -> std::int64_t {
          if (r % 13 == 5) return std::uniform_int_distribution<std::int64_t>(600, 2500)(lengths);
          return std::uniform_int_distribution<std::int64_t>(0, 6)(lengths);
        },
        rng);
    SCOPED_TRACE("trial " + std::to_string(trial) + ": " + std::to_string(rows) + " rows");
    const std::int64_t long_rows = (rows + 7) / 13;
    for (const std::int64_t block_size : {128, 256, 512})
      for (const std::int64_t separator : {long_rows, long_rows + 5, rows / 2})
        for (const std::int64_t block_rows : {std::int64_t{1}, long_rows, separator})
          expect_layout_multiplies_like_the_matrix(m, separator, rng,
                                                   std::min(block_rows, separator), block_size);
  }
}

TEST(CudaStripLayout, SortsTheRowsByLengthStablyIntoAPermutation) {
  std::mt19937_64 rng(seed_of_this_run() + 1);
  const CsrMatrix<double> m = random_matrix(500, 200, 6, 17, 150, rng);
  const StripLayout<double> l = make_strip_layout<double>(m, 100);
  std::vector<std::int32_t> sorted = l.permutation;
  std::sort(sorted.begin(), sorted.end());
  std::vector<std::int32_t> identity(500);
  std::iota(identity.begin(), identity.end(), 0);
  EXPECT_EQ(sorted, identity) << "the permutation holds every row once";
  EXPECT_EQ(l.permutation.front(), 17) << "the long row comes first";
  for (std::size_t i = 1; i < l.permutation.size(); ++i) {
    const std::int64_t before = m.row_length(l.permutation[i - 1]);
    const std::int64_t here = m.row_length(l.permutation[i]);
    ASSERT_GE(before, here) << "position " << i << ": lengths ascend";
    if (before == here) {
      ASSERT_LT(l.permutation[i - 1], l.permutation[i]) << "position " << i << ": not stable";
    }
  }
}

TEST(CudaStripLayout, RefusesASeparatorOutsideTheRows) {
  std::mt19937_64 rng(seed_of_this_run() + 2);
  const CsrMatrix<double> m = random_matrix(10, 10, 3, -1, 0, rng);
  try {
    make_strip_layout<float>(m, 11);
    FAIL() << "built a separator below the last row";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    EXPECT_STREQ(e.what(), "cuda_strip: separator 11 is outside [0, 10]");
  }
}

// ---- the rules ----------------------------------------------------------------------------

const DeviceInfo kH100 = testing::h100();

// Rows of the H100 strip at a warp per row and blocks of 256: 40 registers a thread hold 6
// blocks (48 warps) on an SM, 132 SMs x 48 warps = 6336 rows.
std::int64_t warp_strip() { return CudaStripRules::strip_rows(kH100, 32, 256); }

MatrixFeatures features_of_df(std::vector<RowLengthCount> df, std::int64_t empty_rows = 0) {
  MatrixFeatures whole;
  whole.cols = 1 << 20;
  whole.x_sectors_per_nonzero = 1.0;
  return part_features(whole, std::move(df), empty_rows);
}

Candidate strip_candidate(StripVariant variant, std::int64_t separator, std::uint32_t lanes,
                          std::uint32_t csr_block = 256, std::uint32_t ell_block = 256) {
  return Candidate{.format = kCudaStripFormatId,
                   .params = FieldSet::of(CudaStripParams{
                       .variant = static_cast<std::uint32_t>(variant),
                       .separator = separator,
                       .csr_threads_per_row = lanes,
                       .csr_block_size = csr_block,
                       .ell_block_size = ell_block}),
                   .launch = {}};
}

TEST(CudaStripRules, StripOfTheH100FromOccupancy) {
  EXPECT_EQ(warp_strip(), 6336);
  EXPECT_EQ(CudaStripRules::strip_rows(kH100, 4, 256), 8 * 6336);
}

TEST(CudaStripRules, SortedRowRangeReadsTheDfLongestFirst) {
  // Sorted lengths: 9, 9, 5, 5, 5, 1, 0, 0.
  const MatrixFeatures f = features_of_df({{1, 1}, {5, 3}, {9, 2}}, 2);
  EXPECT_EQ(sorted_row_range(f, 0, 2),
            (SortedRowRange{.distribution = {{9, 2}}, .empty_rows = 0, .nnz = 18, .width = 9}));
  EXPECT_EQ(sorted_row_range(f, 1, 5), (SortedRowRange{.distribution = {{1, 1}, {5, 3}, {9, 1}},
                                                       .empty_rows = 0,
                                                       .nnz = 25,
                                                       .width = 9}));
  EXPECT_EQ(sorted_row_range(f, 4, 4), (SortedRowRange{.distribution = {{1, 1}, {5, 1}},
                                                       .empty_rows = 2,
                                                       .nnz = 6,
                                                       .width = 5}));
  EXPECT_EQ(sorted_row_range(f, 6, 2), (SortedRowRange{.distribution = {}, .empty_rows = 2, .nnz = 0, .width = 0}));
  EXPECT_THROW(sorted_row_range(f, 5, 4), Error);
}

TEST(CudaStripRules, OffersTheSeparatorBelowTheLongRowsWithoutModels) {
  const std::int64_t s = warp_strip();
  // 2 strips of rows of 200, 20 strips of rows of 4: both model-free rules (below the longest
  // rows; below the rows of at least a warp's length) give 2 strips; the CSR part's mean is
  // 200, so the hopper variant would also run a warp per row and adds nothing.
  const MatrixFeatures f = features_of_df({{4, 20 * s}, {200, 2 * s}});
  const CudaStripRules rules;
  EXPECT_EQ(rules.candidates(f, kH100),
            (std::vector<Candidate>{strip_candidate(StripVariant::paper, 2 * s, 32)}));
}

TEST(CudaStripRules, SizesTheHopperLanesToTheCsrPartsMeanLength) {
  const std::int64_t s = warp_strip();
  // 3 strips of rows of 6, 10 of rows of 2. Paper: below the rows of 6 (3 strips). Hopper:
  // those rows' mean, 6, runs 4 lanes a row, whose strip is 8 warp strips.
  const MatrixFeatures f = features_of_df({{2, 10 * s}, {6, 3 * s}});
  const CudaStripRules rules;
  EXPECT_EQ(rules.candidates(f, kH100),
            (std::vector<Candidate>{strip_candidate(StripVariant::paper, 3 * s, 32),
                                    strip_candidate(StripVariant::hopper, 8 * s, 4)}));
  for (const Candidate& c : rules.candidates(f, kH100)) EXPECT_TRUE(rules.is_valid(c, f, kH100));
  EXPECT_TRUE(rules.admissible(f, kH100, Precision::fp64, std::uint64_t{1} << 40));
}

TEST(CudaStripRules, OffersNothingWhereNoPartitionIsPossible) {
  const CudaStripRules rules;
  const std::int64_t s = warp_strip();
  const std::uint64_t plenty = std::uint64_t{1} << 40;
  // One row length (calibration's samples): a split would run the same rows in two kernels.
  const MatrixFeatures uniform = features_of_df({{7, 5 * s}});
  EXPECT_TRUE(rules.candidates(uniform, kH100).empty());
  EXPECT_FALSE(rules.admissible(uniform, kH100, Precision::fp64, plenty));
  // No more rows than one strip, and no row longer than a block (none runs a block each): no
  // boundary inside.
  const MatrixFeatures small = features_of_df({{1, 100}, {200, 2}});
  EXPECT_TRUE(rules.candidates(small, kH100).empty());
  EXPECT_FALSE(rules.admissible(small, kH100, Precision::fp64, plenty));
  // On the CPU, or a GPU whose per-SM limits are unknown (no occupancy, so no strip).
  const MatrixFeatures f = features_of_df({{2, 10 * s}, {6, 3 * s}});
  EXPECT_FALSE(rules.admissible(f, testing::eight_core_cpu(), Precision::fp64, plenty));
  DeviceInfo unknown_limits = kH100;
  unknown_limits.registers_per_sm = 0;
  EXPECT_TRUE(rules.candidates(f, unknown_limits).empty());
}

TEST(CudaStripRules, CountsTheBytesOfBothPartsAndThePermutation) {
  const std::int64_t s = warp_strip();
  const MatrixFeatures f = features_of_df({{2, 10 * s}, {6, 3 * s}}, 5);
  const CudaStripRules rules;
  const std::uint64_t rows = 13 * s + 5;
  const std::uint64_t csr = (3 * s + 1) * 8 + (18 * s) * (4 + 8);
  const std::uint64_t ell = (10 * s + 5) * 2 * (4 + 8) + (10 * s + 5) * 4;
  EXPECT_EQ(rules.device_bytes(f, Precision::fp64, strip_candidate(StripVariant::paper, 3 * s, 32)),
            rows * 4 + csr + ell);
  const std::uint64_t csr32 = (3 * s + 1) * 8 + (18 * s) * (4 + 4);
  const std::uint64_t ell32 = (10 * s + 5) * 2 * (4 + 4) + (10 * s + 5) * 4;
  EXPECT_EQ(rules.device_bytes(f, Precision::fp32, strip_candidate(StripVariant::paper, 3 * s, 32)),
            rows * 4 + csr32 + ell32);
}

TEST(CudaStripRules, PartsAreTheCsrVectorRowsAboveAndTheEllRowsBelow) {
  const std::int64_t s = warp_strip();
  const MatrixFeatures f = features_of_df({{2, 10 * s}, {6, 3 * s}, {40, 2}}, 7);
  const CudaStripRules rules;
  const std::vector<FormatPart> parts =
      rules.parts(f, strip_candidate(StripVariant::hopper, 8 * s, 4, 128, 512));
  ASSERT_EQ(parts.size(), 2U);
  EXPECT_EQ(parts[0].runs, FormatPart::Runs::gpu);
  EXPECT_EQ(parts[0].candidate.format, kCudaCsrVectorFormatId);
  EXPECT_EQ(parts[0].candidate.launch.threads_per_row, 4U);
  EXPECT_EQ(parts[0].candidate.launch.block_size, 128U);
  EXPECT_EQ(parts[0].features.rows, 8 * s);
  EXPECT_EQ(parts[0].features.distribution,
            (std::vector<RowLengthCount>{{2, 5 * s - 2}, {6, 3 * s}, {40, 2}}));
  EXPECT_EQ(parts[1].runs, FormatPart::Runs::gpu);
  EXPECT_EQ(parts[1].candidate.format, kCudaEllFormatId);
  EXPECT_EQ(CudaEllRules::params_of(parts[1].candidate).ell_width, 2U);
  EXPECT_EQ(parts[1].candidate.launch.block_size, 512U);
  EXPECT_EQ(parts[1].features.rows, 5 * s + 2 + 7);
  EXPECT_EQ(parts[1].features.empty_rows, 7);
  EXPECT_EQ(parts[1].features.distribution, (std::vector<RowLengthCount>{{2, 5 * s + 2}}));
  EXPECT_EQ(parts[0].features.nnz + parts[1].features.nnz, f.nnz);
  EXPECT_EQ(parts[0].features.cols, f.cols);
}

// The ELL part is predicted as the uniform ELL its sorted rows' warps walk, and each part pays
// for writing y through the sort: its permutation entries, and a y sector again per run of
// consecutive caller rows it holds (BCE's per-length runs, shared out where a length is cut).
TEST(CudaStripRules, PartsPayTheWalkedSlotsAndTheWritesThroughTheSort) {
  const std::int64_t s = warp_strip();
  // Sorted: s rows of 9, then 3 s of 3 and 2 s of 1 (and 16 empty rows) below the separator.
  MatrixFeatures f = features_of_df({{1, 2 * s}, {3, 3 * s}, {9, s}}, 16);
  f.format_features.emplace("cuda_bce", FieldSet::of(BceRowRuns{.runs = {40, 90, 1}}));
  const CudaStripRules rules;
  const std::vector<FormatPart> parts =
      rules.parts(f, strip_candidate(StripVariant::paper, s, 32));
  ASSERT_EQ(parts.size(), 2U);
  // Above: one length, one run of caller rows: no sector written twice.
  EXPECT_EQ(parts[0].row_map_bytes, static_cast<std::uint64_t>(s) * 4U);
  EXPECT_EQ(parts[0].scattered_row_runs, 0);
  // Below: (3 s x 3 + 2 s x 1) / (5 s + 16) = 2.2 slots a row (the empty rows walk none),
  // rounded: 2, not its width 3.
  EXPECT_EQ(CudaEllRules::params_of(parts[1].candidate).ell_width, 2U);
  EXPECT_EQ(parts[1].row_map_bytes, static_cast<std::uint64_t>(5 * s + 16) * 4U);
  EXPECT_EQ(parts[1].scattered_row_runs, 40 + 90);
  // Without the runs feature only the permutation is charged.
  const MatrixFeatures plain = features_of_df({{1, 2 * s}, {3, 3 * s}, {9, s}}, 16);
  EXPECT_EQ(rules.parts(plain, strip_candidate(StripVariant::paper, s, 32))[1].scattered_row_runs,
            0);
  // A length cut by the separator gets its share of the runs (half its rows: half its runs).
  const std::vector<FormatPart> cut =
      rules.parts(f, strip_candidate(StripVariant::paper, 2 * s, 32));
  EXPECT_EQ(cut[0].scattered_row_runs, 1 + 90 / 3);
}

// The parts visit the rows in the whole matrix's length-sorted order: they gather x as that
// order does (cuda_sell's measured sorted gathers), and their spans are no more local than
// those gathers say; without cuda_sell's features they keep the matrix's own.
TEST(CudaStripRules, PartsGatherXAsTheLengthSortedOrderDoes) {
  const std::int64_t s = warp_strip();
  MatrixFeatures f = features_of_df({{2, 10 * s}, {6, 3 * s}, {40, 2}}, 7);
  f.x_sectors_per_nonzero = 0.05;  // a band in the caller's order
  f.mean_row_span_fraction = 0.001;
  const CudaStripRules rules;
  const Candidate candidate = strip_candidate(StripVariant::hopper, 8 * s, 4, 128, 512);
  for (const FormatPart& part : rules.parts(f, candidate)) {
    EXPECT_DOUBLE_EQ(part.features.x_sectors_per_nonzero, 0.05);
    EXPECT_DOUBLE_EQ(part.features.mean_row_span_fraction, 0.001);
  }
  // Sorted over the whole matrix, a group of rows gathers 0.6 sectors a non-zero.
  const std::int64_t rows = f.rows;
  f.format_features.emplace("cuda_sell",
                            FieldSet::of(CudaSellFeatures{.padded_lengths_32 = {},
                                                          .padded_rows_32 = {},
                                                          .padded_lengths_64 = {},
                                                          .padded_rows_64 = {},
                                                          .sort_windows = {rows},
                                                          .sorted_sectors_per_nonzero = {0.6},
                                                          .sorted_slots_32 = {0},
                                                          .sorted_slots_64 = {0},
                                                          .sector_slots_4 = 0,
                                                          .sector_slots_8 = 0}));
  for (const FormatPart& part : rules.parts(f, candidate)) {
    EXPECT_DOUBLE_EQ(part.features.x_sectors_per_nonzero, 0.6);
    EXPECT_GE(x_span_randomness(part.features), x_gather_randomness(part.features) - 1e-12);
    EXPECT_GT(x_span_randomness(part.features), 0.1);
  }
}

// ---- rows a block each (the hopper variant's long rows) -------------------------------------

// H100, blocks of 256: 6336 resident warps. circuit-3M (14M non-zeros): a warp's even share is
// ceil(14e6 / 6336) = 2210 entries, so its rows of 50,000 run a block each; a small matrix's
// threshold is the block itself (a shorter row would idle a block's lanes).
TEST(CudaStripBlockRows, ThresholdIsAWarpsEvenShareOfTheMatrixAndAtLeastTheBlock) {
  EXPECT_EQ(block_per_row_min_length(14'000'000, kH100, 256), 2210);
  EXPECT_EQ(block_per_row_min_length(6336 * 300, kH100, 256), 300);
  EXPECT_EQ(block_per_row_min_length(6336 * 300 + 1, kH100, 256), 301);
  EXPECT_EQ(block_per_row_min_length(1000, kH100, 256), 256);
  EXPECT_EQ(block_per_row_min_length(0, kH100, 512), 512);
  // Blocks of 512 at 40 registers a thread: 3 a SM, 48 warps, the same 6336.
  EXPECT_EQ(block_per_row_min_length(14'000'000, kH100, 512), 2210);
  EXPECT_THROW(block_per_row_min_length(-1, kH100, 256), Error);
  DeviceInfo unknown_limits = kH100;
  unknown_limits.registers_per_sm = 0;
  EXPECT_THROW(block_per_row_min_length(1000, unknown_limits, 256), Error);
}

// 50,000 entries over 256 threads: 195 full rounds (32 a warp) and 80 left, to warps 0-2
// (32, 32, 16): warps 0, 1 walk 6272, warp 2 6256, warps 3-7 6240 (the longest share, 6272,
// is the critical path: 196 steps of 32 lanes, against 1,563 for one warp).
TEST(CudaStripBlockRows, TilingGivesEachWarpItsStridedShare) {
  EXPECT_EQ(block_row_warp_shares(50'000, 256),
            (std::vector<RowLengthCount>{{6240, 5}, {6256, 1}, {6272, 2}}));
  EXPECT_EQ(block_row_warp_shares(40, 128), (std::vector<RowLengthCount>{{8, 1}, {32, 1}}));
  EXPECT_EQ(block_row_warp_shares(1024, 512), (std::vector<RowLengthCount>{{64, 16}}));
  EXPECT_TRUE(block_row_warp_shares(0, 256).empty());
  for (const std::int64_t length : {1, 31, 33, 255, 257, 4097, 50'001})
    for (const std::uint32_t block : {128u, 256u, 512u}) {
      std::int64_t entries = 0;
      std::int64_t warps = 0;
      for (const RowLengthCount& c : block_row_warp_shares(length, block)) {
        entries += c.length * c.rows;
        warps += c.rows;
        EXPECT_LE(c.length, (length + block - 1) / block * 32);
      }
      EXPECT_EQ(entries, length) << length << " over " << block;
      EXPECT_LE(warps, block / 32);
    }
  EXPECT_THROW(block_row_warp_shares(10, 100), Error);
  EXPECT_THROW(block_row_warp_shares(-1, 256), Error);
}

// circuit-3M's DF: 1M rows each of 2, 4, 6 entries and 50 of 50,000; 14.5M non-zeros, so a
// block each for rows above ceil(14.5e6 / 6336) = 2289.
MatrixFeatures circuit_df() {
  return features_of_df({{2, 1'000'000}, {4, 1'000'000}, {6, 1'000'000}, {50'000, 50}});
}

Candidate block_candidate(std::int64_t separator, std::uint32_t lanes, std::int64_t block_rows,
                          std::uint32_t csr_block = 256) {
  Candidate c = strip_candidate(StripVariant::hopper, separator, lanes, csr_block);
  CudaStripParams p = CudaStripRules::params_of(c);
  p.block_rows = block_rows;
  c.params = FieldSet::of(p);
  return c;
}

TEST(CudaStripBlockRows, ModelFreeRunsAFewVeryLongRowsABlockEachAndTheRestAsEll) {
  const std::int64_t s = warp_strip();
  const MatrixFeatures f = circuit_df();
  const CudaStripRules rules;
  // Paper (as printed): the strip holding the long rows, a warp each. Hopper: the 50 long rows
  // a block each with the rest ELL (width 6, within the padding bound), and the same with the
  // rest of the first strip (rows of 6: 4 lanes, whose strip is 8 warp strips) on CSR vector.
  EXPECT_EQ(rules.candidates(f, kH100),
            (std::vector<Candidate>{strip_candidate(StripVariant::paper, s, 32),
                                    block_candidate(50, 32, 50),
                                    block_candidate(50 + 8 * s, 4, 50)}));
  for (const Candidate& c : rules.candidates(f, kH100)) EXPECT_TRUE(rules.is_valid(c, f, kH100));
}

TEST(CudaStripBlockRows, PartsPredictTheBlockRowsAsTheirWarpShares) {
  const std::int64_t s = warp_strip();
  const MatrixFeatures f = circuit_df();
  const CudaStripRules rules;
  const std::vector<FormatPart> at_50 = rules.parts(f, block_candidate(50, 32, 50));
  ASSERT_EQ(at_50.size(), 2U);  // no warp rows
  EXPECT_EQ(at_50[0].candidate.format, kCudaCsrVectorFormatId);
  EXPECT_EQ(at_50[0].candidate.launch.threads_per_row, 32U);
  EXPECT_EQ(at_50[0].candidate.launch.block_size, 256U);
  EXPECT_EQ(at_50[0].features.rows, 50 * 8);
  EXPECT_EQ(at_50[0].features.distribution,
            (std::vector<RowLengthCount>{{6240, 250}, {6256, 50}, {6272, 100}}));
  EXPECT_EQ(at_50[0].features.row_length_max, 6272);  // the critical path, not 50,000
  EXPECT_EQ(at_50[1].candidate.format, kCudaEllFormatId);
  // The ELL part's sorted rows of 6, 4 and 2 (a million each): its warps walk 4 slots a row,
  // not its width 6.
  EXPECT_EQ(CudaEllRules::params_of(at_50[1].candidate).ell_width, 4U);
  EXPECT_EQ(at_50[0].features.nnz + at_50[1].features.nnz, f.nnz);
  // The sort's own bytes: each part reads its rows' permutation entries.
  EXPECT_EQ(at_50[1].row_map_bytes, static_cast<std::uint64_t>(f.rows - 50) * 4U);

  const std::vector<FormatPart> three =
      rules.parts(f, block_candidate(50 + 8 * s, 4, 50, 512));
  ASSERT_EQ(three.size(), 3U);  // block rows, warp rows, ELL: apply()'s launch order
  EXPECT_EQ(three[0].features.rows, 50 * 16);
  EXPECT_EQ(three[0].candidate.launch.block_size, 512U);
  EXPECT_EQ(three[1].candidate.launch.threads_per_row, 4U);
  EXPECT_EQ(three[1].features.distribution, (std::vector<RowLengthCount>{{6, 8 * s}}));
  EXPECT_EQ(three[2].features.rows, f.rows - 50 - 8 * s);
  EXPECT_EQ(three[0].features.nnz + three[1].features.nnz + three[2].features.nnz, f.nnz);
}

// A predictor with a critical path: a CSR-vector part takes the longer of streaming its
// non-zeros (0.00001 each) and its longest row's walk (one step per threads_per_row entries);
// ELL 0.0001 a slot. A warp over a row of 50,000 walks 1,562.5 steps, a block's warps 196.
class CriticalPathPredictor final : public PartTimePredictor {
 public:
  std::optional<double> part_ms(const FormatPart& part) const override {
    if (part.candidate.format == kCudaCsrVectorFormatId)
      return std::max(0.00001 * static_cast<double>(part.features.nnz),
                      static_cast<double>(part.features.row_length_max) /
                          part.candidate.launch.threads_per_row);
    if (part.candidate.format == kCudaEllFormatId)
      return 0.0001 * static_cast<double>(part.features.rows) *
             CudaEllRules::params_of(part.candidate).ell_width;
    return std::nullopt;
  }
};

TEST(CudaStripBlockRows, ChosenByPartsWhereTheLongRowsWarpIsTheCriticalPath) {
  const MatrixFeatures f = circuit_df();
  const CudaStripRules rules;
  const CriticalPathPredictor predictor;
  const std::vector<Candidate> chosen = rules.candidates_chosen_by(predictor, f, kH100);
  const auto total_ms = [&](const Candidate& c) {
    double ms = 0.0;
    for (const FormatPart& part : rules.parts(f, c)) ms += *predictor.part_ms(part);
    return ms;
  };
  const auto block = std::find(chosen.begin(), chosen.end(), block_candidate(50, 32, 50));
  ASSERT_NE(block, chosen.end());
  for (const Candidate& c : chosen)
    if (CudaStripRules::params_of(c).block_rows == 0) EXPECT_LT(total_ms(*block), total_ms(c));
  // 196 steps + ELL's 12M walked slots (3M sorted rows of 6, 4 and 2), against the paper's
  // 1,562.5 + its ELL.
  EXPECT_NEAR(total_ms(*block), 196.0 + 0.0001 * 4.0 * static_cast<double>(f.rows - 50), 1e-6);
  EXPECT_NEAR(total_ms(strip_candidate(StripVariant::paper, warp_strip(), 32)),
              1562.5 + 0.0001 * 4.0 * static_cast<double>(f.rows - warp_strip()), 1e-6);
}

TEST(CudaStripBlockRows, RefusesBlockRowsThatDoNotFitThePlan) {
  const std::int64_t s = warp_strip();
  const MatrixFeatures f = circuit_df();
  const auto message = [&](const Candidate& c) {
    try {
      CudaStripRules::check_candidate(c, f, kH100);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("(valid)");
  };
  EXPECT_EQ(message(block_candidate(50 + 8 * s, 4, 50)), "(valid)");
  EXPECT_EQ(message(block_candidate(50, 32, 51)),
            "cuda_strip: block_rows 51 is not inside [0, separator 50]");
  EXPECT_EQ(message(block_candidate(50 + s, 4, 50)),
            "cuda_strip: separator " + std::to_string(50 + s) +
                " less block_rows 50 is not a whole number of strips of " +
                std::to_string(8 * s) + " rows (4 threads per row, blocks of 256)");
  Candidate paper = strip_candidate(StripVariant::paper, s + 50, 32);
  CudaStripParams p = CudaStripRules::params_of(paper);
  p.block_rows = 50;
  paper.params = FieldSet::of(p);
  EXPECT_EQ(message(paper),
            "cuda_strip: the paper variant runs every CSR row on a warp, not 50 rows a block each");
}

// ---- the separator chosen against part predictions -----------------------------------------

// CSR vector: 1 per non-zero and 8 per row (a row's offsets, its reduction), and a little per
// lane a row (idle lanes); ELL: 2 per slot of its candidate's width (the slots its warps walk).
// So ELL is cheap on short rows and CSR on long rows.
class LongRowsOnCsr final : public PartTimePredictor {
 public:
  std::optional<double> part_ms(const FormatPart& part) const override {
    const auto rows = static_cast<double>(part.features.rows);
    if (part.candidate.format == kCudaCsrVectorFormatId)
      return static_cast<double>(part.features.nnz) + 8.0 * rows +
             0.001 * rows * part.candidate.launch.threads_per_row;
    if (part.candidate.format == kCudaEllFormatId)
      return 2.0 * rows * CudaEllRules::params_of(part.candidate).ell_width;
    return std::nullopt;
  }
};

// ELL at a tenth of CSR per non-zero whatever its padding.
class EllAlwaysWins final : public PartTimePredictor {
 public:
  std::optional<double> part_ms(const FormatPart& part) const override {
    const auto nnz = static_cast<double>(part.features.nnz);
    return part.candidate.format == kCudaEllFormatId ? 0.1 * nnz : nnz + 1.0;
  }
};

class NothingCalibrated final : public PartTimePredictor {
 public:
  std::optional<double> part_ms(const FormatPart&) const override { return std::nullopt; }
};

TEST(CudaStripChosenByParts, PutsTheSeparatorBelowTheLongRows) {
  const std::int64_t s = warp_strip();
  // 2 strips of rows of 200, 20 of rows of 4; in units of s, a warp per row:
  // separator 0 (cuda_ell, unsorted, width 200): 2 x 22 x 200 = 8800; 1 strip: 208 + ELL of
  // 21 strips whose warps walk 13 slots a row (280 / 21, rounded), 546; 2 strips: 416 + 160 =
  // 576; k > 2 strips: 416 + 12 (k - 2) + 8 (22 - k), rising; all CSR: 656. Hopper: at 16 lanes
  // the strip is 2 warp strips, the same 576 with less lane cost; at 8 lanes 4 strips (584).
  const MatrixFeatures f = features_of_df({{4, 20 * s}, {200, 2 * s}});
  const CudaStripRules rules;
  const std::vector<Candidate> chosen = rules.candidates_chosen_by(LongRowsOnCsr{}, f, kH100);
  EXPECT_EQ(chosen, (std::vector<Candidate>{strip_candidate(StripVariant::paper, 2 * s, 32),
                                            strip_candidate(StripVariant::hopper, 2 * s, 16)}));
  // A stored plan of a model-chosen separator revalidates structurally, after a JSON trip.
  for (const Candidate& c : chosen) {
    const Plan plan{.format = c.format,
                    .format_name = "cuda_strip",
                    .params = c.params,
                    .launch = c.launch,
                    .features = f};
    const Plan back = plan_from_json(plan_to_json(plan));
    const Candidate read{.format = back.format, .params = back.params, .launch = back.launch};
    EXPECT_EQ(read, c);
    EXPECT_TRUE(rules.is_valid(read, back.features, kH100));
  }
}

// Each part with a launch floor: the CSR strips above a separator must add up to their part
// predicted as one launch, not one floor per strip.
class PartsWithLaunchFloors final : public PartTimePredictor {
 public:
  std::optional<double> part_ms(const FormatPart& part) const override {
    const auto rows = static_cast<double>(part.features.rows);
    if (part.candidate.format == kCudaCsrVectorFormatId)
      return 3000.0 + static_cast<double>(part.features.nnz) + 8.0 * rows;
    if (part.candidate.format == kCudaEllFormatId)
      return 3000.0 + 0.5 * rows * CudaEllRules::params_of(part.candidate).ell_width;
    return std::nullopt;
  }
};

TEST(CudaStripChosenByParts, ChoosesTheStripSeparatorWhosePartsArePredictedLeast) {
  const std::int64_t s = warp_strip();
  const MatrixFeatures f = features_of_df({{3, 17 * s + 5}, {30, 4 * s}, {90, s / 2}, {700, 9}});
  const CudaStripRules rules;
  const PartsWithLaunchFloors predictor;
  // Brute force: every separator a whole number of warp strips inside the matrix, each
  // predicted as the sum of its two parts.
  std::int64_t best_separator = 0;
  double best_ms = std::numeric_limits<double>::infinity();
  for (std::int64_t separator = s; separator < f.rows; separator += s) {
    double ms = 0.0;
    for (const FormatPart& part :
         rules.parts(f, strip_candidate(StripVariant::paper, separator, 32)))
      ms += *predictor.part_ms(part);
    if (ms < best_ms) {
      best_ms = ms;
      best_separator = separator;
    }
  }
  std::cout << "brute force: separator " << best_separator << " (" << best_separator / s
            << " strips), " << best_ms << "\n";
  // The hopper sweep has no lane cost to gain here and the best split lies at an odd number of
  // warp strips, which no narrower width's strip divides: it picks a warp per row at the same
  // separator, the paper's candidate. What the hopper variant may add is block rows predicted
  // below every candidate chosen before them (here the 9 rows of 700 a block each, the rest
  // sorted ELL).
  const std::vector<Candidate> chosen = rules.candidates_chosen_by(predictor, f, kH100);
  ASSERT_FALSE(chosen.empty());
  EXPECT_EQ(chosen.front(), strip_candidate(StripVariant::paper, best_separator, 32));
  for (std::size_t i = 1; i < chosen.size(); ++i) {
    EXPECT_GT(CudaStripRules::params_of(chosen[i]).block_rows, 0);
    double ms = 0.0;
    for (const FormatPart& part : rules.parts(f, chosen[i])) ms += *predictor.part_ms(part);
    EXPECT_LT(ms, best_ms);
  }
}

TEST(CudaStripChosenByParts, OffersNothingWhenEllWinsOutright) {
  // No partition: cuda_ell, a candidate of its own, covers it.
  const std::int64_t s = warp_strip();
  const MatrixFeatures f = features_of_df({{4, 20 * s}, {200, 2 * s}});
  EXPECT_TRUE(CudaStripRules{}.candidates_chosen_by(EllAlwaysWins{}, f, kH100).empty());
  // Nor on a GPU whose per-SM limits are unknown (no occupancy, so no strip).
  DeviceInfo unknown_limits = kH100;
  unknown_limits.registers_per_sm = 0;
  EXPECT_TRUE(CudaStripRules{}.candidates_chosen_by(LongRowsOnCsr{}, f, unknown_limits).empty());
}

TEST(CudaStripChosenByParts, FallsBackToTheModelFreeChoiceWhereAPartCannotBePredicted) {
  const std::int64_t s = warp_strip();
  const MatrixFeatures f = features_of_df({{2, 10 * s}, {6, 3 * s}});
  const CudaStripRules rules;
  EXPECT_EQ(rules.candidates_chosen_by(NothingCalibrated{}, f, kH100), rules.candidates(f, kH100));
}

// ---- a matrix through feature extraction ----------------------------------------------------

TEST(CudaStripRules, ModelFreeCandidatesOfAPowerLawMatrixBuildLayoutsThatMultiplyRight) {
  std::mt19937_64 rng(seed_of_this_run() + 3);
  // 30040 rows of 0..6 entries, every 751st of 50..400 (40 of them): more than two strips.
  std::mt19937_64 lengths(rng());
  const CsrMatrix<double> m = random_matrix(
      30040, 30000,
      [&](std::int64_t r) {
        return std::uniform_int_distribution<std::int64_t>(r % 751 == 0 ? 50 : 0,
                                                           r % 751 == 0 ? 400 : 6)(lengths);
      },
      rng);
  const MatrixFeatures f = extract_features(m);
  const CudaStripRules rules;
  const std::vector<Candidate> space = rules.candidates(f, kH100);
  ASSERT_FALSE(space.empty());
  EXPECT_TRUE(rules.admissible(f, kH100, Precision::fp32, std::uint64_t{1} << 30));
  for (const Candidate& c : space) {
    const CudaStripParams p = CudaStripRules::params_of(c);
    std::cout << "candidate: variant " << p.variant << ", separator " << p.separator << ", "
              << p.csr_threads_per_row << " lanes\n";
    EXPECT_TRUE(rules.is_valid(c, f, kH100));
    const StripLayout<double> l = make_strip_layout<double>(m, p.separator);
    // The rules' bytes are the layout's arrays, exactly.
    const std::uint64_t built =
        l.permutation.size() * 4 + l.csr_row_offsets.size() * 8 +
        l.csr_col_indices.size() * 4 + l.csr_values.size() * 8 + l.ell_lengths.size() * 4 +
        l.ell_col_indices.size() * 4 + l.ell_values.size() * 8;
    EXPECT_EQ(rules.device_bytes(f, Precision::fp64, c), built);
    expect_layout_multiplies_like_the_matrix(m, p.separator, rng);
  }
}

// ---- stored plans -------------------------------------------------------------------------

void expect_refused(const Candidate& candidate, const MatrixFeatures& f,
                    const std::string& message) {
  EXPECT_FALSE(CudaStripRules{}.is_valid(candidate, f, kH100)) << message;
  try {
    CudaStripRules::check_candidate(candidate, f, kH100);
    FAIL() << "accepted: " << message;
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    EXPECT_EQ(std::string(e.what()), message);
  }
}

TEST(CudaStripRules, RefusesAStoredPlanThatDoesNotFitThisMatrix) {
  const std::int64_t s = warp_strip();
  const MatrixFeatures f = features_of_df({{2, 10 * s}, {6, 3 * s}});
  EXPECT_TRUE(CudaStripRules{}.is_valid(strip_candidate(StripVariant::paper, 5 * s, 32), f, kH100));
  expect_refused(strip_candidate(StripVariant::paper, 100, 32), f,
                 "cuda_strip: separator 100 is not a whole number of strips of 6336 rows (32 "
                 "threads per row, blocks of 256)");
  expect_refused(strip_candidate(StripVariant::hopper, s, 4), f,
                 "cuda_strip: separator 6336 is not a whole number of strips of 50688 rows (4 "
                 "threads per row, blocks of 256)");
  expect_refused(strip_candidate(StripVariant::paper, 13 * s, 32), f,
                 "cuda_strip: separator 82368 is not strictly inside the matrix's 82368 rows (no "
                 "partition is cuda_ell or cuda_csr_vector)");
  expect_refused(strip_candidate(StripVariant::paper, 0, 32), f,
                 "cuda_strip: separator 0 is not strictly inside the matrix's 82368 rows (no "
                 "partition is cuda_ell or cuda_csr_vector)");
  expect_refused(strip_candidate(StripVariant::paper, s, 8), f,
                 "cuda_strip: the paper variant runs one warp per row, not 8 threads per row");
  expect_refused(strip_candidate(static_cast<StripVariant>(2), s, 32), f,
                 "cuda_strip: variant 2 is neither 0 (paper) nor 1 (hopper)");
  expect_refused(strip_candidate(StripVariant::hopper, s, 3), f,
                 "cuda_strip: csr_threads_per_row 3 is not a compiled width (2, 4, 8, 16, 32)");
  expect_refused(strip_candidate(StripVariant::paper, s, 32, 96), f,
                 "cuda_strip: csr_block_size 96 is not one of 128, 256, 512");
  expect_refused(strip_candidate(StripVariant::paper, s, 32, 256, 1024), f,
                 "cuda_strip: ell_block_size 1024 is not one of 128, 256, 512");
  Candidate launched = strip_candidate(StripVariant::paper, s, 32);
  launched.launch.block_size = 256;
  expect_refused(launched, f,
                 "cuda_strip: launch {block_size=256} must be empty (the parts' launches are "
                 "its params)");
  Candidate lacking = strip_candidate(StripVariant::paper, s, 32);
  lacking.params = FieldSet({{"variant", std::int64_t{0}}});
  expect_refused(lacking, f, "cuda_strip: field 'separator' is missing");
}

}  // namespace
}  // namespace spmvd
