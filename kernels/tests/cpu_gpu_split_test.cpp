// Paper 003's CPU-GPU split (kernels/formats/cpu_gpu_split/): the host layout multiplied on the
// host as the GPU and the host would, the parts the models predict, K against synthetic costs,
// and the stored-plan rules. No GPU needed.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iostream>
#include <limits>
#include <optional>
#include <random>
#include <set>
#include <span>

#include "core/error.hpp"
#include "core/part_features.hpp"
#include "kernels/format_registry.hpp"
#include "kernels/formats/cpu_coo/cpu_coo_rules.hpp"
#include "kernels/formats/cpu_gpu_split/cpu_gpu_split_layout.hpp"
#include "kernels/formats/cpu_gpu_split/cpu_gpu_split_rules.hpp"
#include "kernels/formats/cuda_csr_vector/cuda_csr_vector_rules.hpp"
#include "kernels/formats/common/sell_layout.hpp"
#include "kernels/formats/cuda_ell/cuda_ell_rules.hpp"
#include "kernels/tests/hand_written.hpp"
#include "models/df_split.hpp"
#include "tuner/feature_extraction.hpp"

namespace spmvd {
namespace {

// Rows of random length (some empty), one very long row, random distinct columns.
CsrMatrix<double> random_matrix(std::mt19937_64& rng, std::int64_t rows, std::int64_t cols,
                                std::int64_t long_row_length) {
  std::uniform_int_distribution<int> length_of(0, 12);
  std::uniform_real_distribution<double> value_of(-1.0, 1.0);
  CsrMatrix<double> m;
  m.rows = rows;
  m.cols = cols;
  const std::int64_t long_row = rows / 3;
  for (std::int64_t r = 0; r < rows; ++r) {
    std::int64_t length = r == long_row ? long_row_length : length_of(rng);
    if (r % 7 == 0 && r != long_row) length = 0;  // empty rows
    length = std::min(length, cols);
    std::set<ColIndex> columns;
    std::uniform_int_distribution<ColIndex> column_of(0, static_cast<ColIndex>(cols - 1));
    while (static_cast<std::int64_t>(columns.size()) < length) columns.insert(column_of(rng));
    for (const ColIndex c : columns) {
      m.col_indices.push_back(c);
      m.values.push_back(value_of(rng));
    }
    m.row_offsets.push_back(static_cast<RowOffset>(m.col_indices.size()));
  }
  return m;
}

// y = alpha * (ELL part + host part) x + beta * y0 over the built arrays, as apply() runs it:
// the ELL kernel's loop (column-major, stops at the first padding slot) writes every row, the
// host part's partial sums are added to the rows it touches.
template <typename Value>
std::vector<double> multiply_built_parts(const CpuGpuSplitLayout<Value>& split,
                                         const std::vector<Value>& x, const std::vector<Value>& y0,
                                         double alpha, double beta) {
  std::vector<Value> y(static_cast<std::size_t>(split.rows));
  for (std::int64_t r = 0; r < split.rows; ++r) {
    Value sum = 0;
    for (std::int64_t j = 0; j < split.ell_width; ++j) {
      const std::int64_t slot = j * split.rows + r;
      if (split.ell_col_indices[slot] < 0) break;
      sum += split.ell_values[slot] * x[split.ell_col_indices[slot]];
    }
    y[r] = beta == 0.0 ? static_cast<Value>(alpha) * sum
                       : static_cast<Value>(alpha) * sum + static_cast<Value>(beta) * y0[r];
  }
  std::vector<Value> partial(split.host.rows.size(), Value(-12345));
  std::vector<Value> carries(static_cast<std::size_t>(split.host.carry_slots()), Value(-12345));
  multiply_host_part(split.host, x.data(), partial.data(), carries.data());
  for (std::size_t t = 0; t < partial.size(); ++t)
    y[split.host.rows[t]] += static_cast<Value>(alpha) * partial[t];
  return {y.begin(), y.end()};
}

template <typename Value>
void expect_split_matches_reference(const CsrMatrix<double>& m, std::int64_t ell_width,
                                    std::mt19937_64& rng) {
  SCOPED_TRACE("K = " + std::to_string(ell_width) + (sizeof(Value) == 4 ? " fp32" : " fp64"));
  const CpuGpuSplitLayout<Value> split = make_cpu_gpu_split_layout<Value>(m, ell_width);
  // Algorithm 1's counts: K slots per row on the GPU, the rest of every longer row on the host.
  std::int64_t host_nnz = 0, host_rows = 0;
  for (std::int64_t r = 0; r < m.rows; ++r)
    if (m.row_length(r) > ell_width) {
      host_nnz += m.row_length(r) - ell_width;
      ++host_rows;
    }
  EXPECT_EQ(split.ell_col_indices.size(), static_cast<std::size_t>(m.rows * ell_width));
  EXPECT_EQ(split.host.nnz(), host_nnz);
  EXPECT_EQ(static_cast<std::int64_t>(split.host.rows.size()), host_rows);
  EXPECT_TRUE(std::is_sorted(split.host.rows.begin(), split.host.rows.end()));

  std::uniform_real_distribution<double> value_of(-1.0, 1.0);
  std::vector<Value> x(static_cast<std::size_t>(m.cols)), y0(static_cast<std::size_t>(m.rows));
  for (Value& v : x) v = static_cast<Value>(value_of(rng));
  for (Value& v : y0) v = static_cast<Value>(value_of(rng));
  const CsrMatrix<Value> rounded = convert_values<Value>(m);
  const std::vector<double> x_double(x.begin(), x.end());
  for (const auto& [alpha, beta] : {std::pair{1.5, 0.0}, std::pair{-0.75, 1.25}}) {
    std::vector<double> expected(y0.begin(), y0.end());
    reference_spmv(rounded, x_double.data(), expected.data(), alpha, beta);
    const std::vector<double> got = multiply_built_parts(split, x, y0, alpha, beta);
    const double tolerance = sizeof(Value) == 4 ? 1e-4 : 1e-12;
    for (std::int64_t r = 0; r < m.rows; ++r)
      ASSERT_NEAR(got[r], expected[r], tolerance * (1.0 + static_cast<double>(m.row_length(r))))
          << "row " << r << " (length " << m.row_length(r) << "), alpha " << alpha << " beta "
          << beta;
  }
}

TEST(CpuGpuSplitLayout, SplitsThePaperExampleAtKTwo) {
  // Paper 003 Sec. 4.2: A = [3 0 0 0; 0 1 4 0; 6 0 2 8; 0 5 0 7], K = 2 leaves COO row 3,
  // column 4, value 8 (1-based) and ELL data (3 0; 1 4; 6 2; 5 7).
  CsrMatrix<double> a{4, 4, {0, 1, 3, 6, 8}, {0, 1, 2, 0, 2, 3, 1, 3}, {3, 1, 4, 6, 2, 8, 5, 7}};
  const CpuGpuSplitLayout<double> split = make_cpu_gpu_split_layout<double>(a, 2);
  EXPECT_EQ(split.ell_values, (std::vector<double>{3, 1, 6, 5, 0, 4, 2, 7}));  // column-major
  EXPECT_EQ(split.ell_col_indices, (std::vector<ColIndex>{0, 1, 0, 1, kPaddingColumn, 2, 2, 3}));
  EXPECT_EQ(split.host.rows, (std::vector<std::int32_t>{2}));
  EXPECT_EQ(split.host.row_offsets, (std::vector<std::int64_t>{0, 1}));
  EXPECT_EQ(split.host.col_indices, (std::vector<ColIndex>{3}));
  EXPECT_EQ(split.host.values, (std::vector<double>{8}));
}

TEST(CpuGpuSplitLayout, HostMultiplyOverTheBuiltPartsEqualsTheCsrReference) {
  const std::uint64_t seed = 20261123;
  std::cout << "cpu_gpu_split layout test: seed " << seed << "\n";
  std::mt19937_64 rng(seed);
  for (const auto& [rows, cols, long_row] :
       {std::tuple{1000, 800, 700}, std::tuple{37, 5000, 4000}, std::tuple{3000, 40, 40}}) {
    const CsrMatrix<double> m = random_matrix(rng, rows, cols, long_row);
    std::int64_t longest = 0;
    for (std::int64_t r = 0; r < m.rows; ++r) longest = std::max(longest, m.row_length(r));
    for (const std::int64_t k : {std::int64_t{1}, std::int64_t{2}, std::int64_t{6}, longest - 1}) {
      expect_split_matches_reference<double>(m, k, rng);
      expect_split_matches_reference<float>(m, k, rng);
    }
  }
}

// ---- the host part's chunks --------------------------------------------------------------

// A matrix whose row r has lengths[r] entries, in columns spread evenly over cols (distinct,
// ascending), values from value_of().
template <typename ValueOf>
CsrMatrix<double> matrix_of_row_lengths(const std::vector<std::int64_t>& lengths, std::int64_t cols,
                                        ValueOf&& value_of) {
  CsrMatrix<double> m;
  m.rows = static_cast<std::int64_t>(lengths.size());
  m.cols = cols;
  for (const std::int64_t length : lengths) {
    for (std::int64_t j = 0; j < length; ++j) {
      m.col_indices.push_back(static_cast<ColIndex>(j * cols / length));
      m.values.push_back(value_of());
    }
    m.row_offsets.push_back(static_cast<RowOffset>(m.col_indices.size()));
  }
  return m;
}

// Equal chunks covering the part, each beginning in the row its first-row index names.
template <typename Value>
void expect_chunks_tile_the_part(const HostCooPart<Value>& host) {
  const std::int64_t nnz = host.nnz();
  const std::int64_t chunks = host.chunk_count();
  ASSERT_EQ(chunks, host_chunk_count(nnz));
  ASSERT_EQ(host.chunk_offsets.size(), static_cast<std::size_t>(chunks + 1));
  EXPECT_EQ(host.carry_slots(), 2 * chunks);
  EXPECT_EQ(host.chunk_offsets.front(), 0);
  EXPECT_EQ(host.chunk_offsets.back(), nnz);
  for (std::int64_t c = 0; c < chunks; ++c) {
    const std::int64_t size = host.chunk_offsets[c + 1] - host.chunk_offsets[c];
    EXPECT_GE(size, std::min(kHostChunkMinEntries, nnz)) << "chunk " << c;
    EXPECT_TRUE(size == nnz / chunks || size == nnz / chunks + 1) << "chunk " << c;
    const std::int64_t t = host.chunk_first_rows[c];
    ASSERT_GE(t, 0);
    ASSERT_LT(t, static_cast<std::int64_t>(host.rows.size()));
    EXPECT_LE(host.row_offsets[t], host.chunk_offsets[c]) << "chunk " << c;
    EXPECT_LT(host.chunk_offsets[c], host.row_offsets[t + 1]) << "chunk " << c;
  }
}

// The chunk boundaries strictly inside host row t (0: the row lies in one chunk).
template <typename Value>
std::int64_t boundaries_cutting(const HostCooPart<Value>& host, std::int64_t t) {
  std::int64_t cuts = 0;
  for (std::int64_t c = 1; c < host.chunk_count(); ++c)
    cuts += host.row_offsets[t] < host.chunk_offsets[c] &&
            host.chunk_offsets[c] < host.row_offsets[t + 1];
  return cuts;
}

// multiply_host_part over the split of m at K against each host row's remainder (its entries
// from the K-th on, the values rounded to Value) summed in double: exactly where `exact`, else
// within a tolerance relative to the row's sum of |a * x|. partial and the carry slots start as
// NaN (a row never written, or a carry read before it is written, fails), and a second multiply
// must give the same bits (the same chunking, so the same sum order, every call).
template <typename Value>
void expect_host_part_matches_its_rows(const CsrMatrix<double>& m, std::int64_t ell_width,
                                       const std::vector<Value>& x, bool exact) {
  SCOPED_TRACE(std::string(sizeof(Value) == 4 ? "fp32" : "fp64") + (exact ? " exact" : " random"));
  const CpuGpuSplitLayout<Value> split = make_cpu_gpu_split_layout<Value>(m, ell_width);
  const HostCooPart<Value>& host = split.host;
  expect_chunks_tile_the_part(host);
  const Value nan = std::numeric_limits<Value>::quiet_NaN();
  std::vector<Value> partial(host.rows.size(), nan);
  std::vector<Value> carries(static_cast<std::size_t>(host.carry_slots()), nan);
  multiply_host_part(host, x.data(), partial.data(), carries.data());
  const double tolerance = sizeof(Value) == 4 ? 1e-4 : 1e-12;
  std::size_t t = 0;
  for (std::int64_t r = 0; r < m.rows; ++r) {
    if (m.row_length(r) <= ell_width) continue;
    ASSERT_LT(t, host.rows.size());
    ASSERT_EQ(host.rows[t], r);
    double sum = 0, magnitude = 0;
    for (RowOffset e = m.row_offsets[r] + ell_width; e < m.row_offsets[r + 1]; ++e) {
      const double product = static_cast<double>(static_cast<Value>(m.values[e])) *
                             static_cast<double>(x[m.col_indices[e]]);
      sum += product;
      magnitude += std::abs(product);
    }
    if (exact)
      ASSERT_EQ(static_cast<double>(partial[t]), sum)
          << "host row " << t << " (row " << r << ", " << m.row_length(r) - ell_width
          << " entries, cut by " << boundaries_cutting(host, static_cast<std::int64_t>(t))
          << " chunk boundaries)";
    else
      ASSERT_NEAR(static_cast<double>(partial[t]), sum, tolerance * magnitude)
          << "host row " << t << " (row " << r << ", " << m.row_length(r) - ell_width
          << " entries, cut by " << boundaries_cutting(host, static_cast<std::int64_t>(t))
          << " chunk boundaries)";
    ++t;
  }
  ASSERT_EQ(t, host.rows.size());
  std::vector<Value> again(host.rows.size(), nan);
  std::fill(carries.begin(), carries.end(), nan);
  multiply_host_part(host, x.data(), again.data(), carries.data());
  EXPECT_EQ(std::memcmp(again.data(), partial.data(), partial.size() * sizeof(Value)), 0)
      << "a second multiply gave other bits";
}

// Both value kinds for one matrix shape: random values and x in [-1, 1]; then positive small
// integers (values 1..3, x 1..2), whose every piece of a cut row adds at least 1 and which fp32
// sums exactly (each row's sum stays below 2^24), so a carry dropped or added twice is an error
// in both precisions.
template <typename Value>
void expect_host_part_matches_for_both_value_kinds(const std::vector<std::int64_t>& lengths,
                                                   std::int64_t cols, std::int64_t ell_width,
                                                   std::mt19937_64& rng) {
  std::uniform_real_distribution<double> random_value(-1.0, 1.0);
  std::vector<Value> x(static_cast<std::size_t>(cols));
  for (Value& v : x) v = static_cast<Value>(random_value(rng));
  expect_host_part_matches_its_rows<Value>(
      matrix_of_row_lengths(lengths, cols, [&] { return random_value(rng); }), ell_width, x, false);
  std::uniform_int_distribution<int> one_to_three(1, 3), one_to_two(1, 2);
  for (Value& v : x) v = static_cast<Value>(one_to_two(rng));
  expect_host_part_matches_its_rows<Value>(
      matrix_of_row_lengths(lengths, cols, [&] { return double(one_to_three(rng)); }), ell_width, x,
      true);
}

TEST(CpuGpuSplitHostPart, ChunkCountGrowsWithTheNonZerosUpToTheCap) {
  EXPECT_EQ(host_chunk_count(0), 0);
  EXPECT_EQ(host_chunk_count(1), 1);
  EXPECT_EQ(host_chunk_count(kHostChunkMinEntries - 1), 1);
  EXPECT_EQ(host_chunk_count(2 * kHostChunkMinEntries - 1), 1);
  EXPECT_EQ(host_chunk_count(2 * kHostChunkMinEntries), 2);
  EXPECT_EQ(host_chunk_count(kHostChunksMax * kHostChunkMinEntries), kHostChunksMax);
  EXPECT_EQ(host_chunk_count(std::int64_t{1} << 40), kHostChunksMax);
}

TEST(CpuGpuSplitHostPart, FewVeryLongRowsAreSpreadOverManyChunks) {
  // 20000 rows of 0..40 entries and 3 rows of 200,001; at K = 1 the host part holds ~1M entries
  // in ~240 chunks: each long row is cut by ~50 chunk boundaries, some chunks lie inside one
  // long row, and some short rows are cut too.
  const std::uint64_t seed = 20261124;
  std::cout << "cpu_gpu_split host part test (few very long rows): seed " << seed << "\n";
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<std::int64_t> short_length(0, 40);
  std::vector<std::int64_t> lengths(20000);
  for (std::int64_t& length : lengths) length = short_length(rng);
  const std::vector<std::size_t> long_rows{7, 10000, 19999};
  for (const std::size_t r : long_rows) lengths[r] = 200001;
  const std::int64_t cols = 250000;

  const CpuGpuSplitLayout<double> split = make_cpu_gpu_split_layout<double>(
      matrix_of_row_lengths(lengths, cols, [] { return 1.0; }), 1);
  const HostCooPart<double>& host = split.host;
  std::int64_t cut_short_rows = 0, chunks_inside_one_row = 0;
  for (std::int64_t t = 0; t < static_cast<std::int64_t>(host.rows.size()); ++t) {
    const std::int64_t cuts = boundaries_cutting(host, t);
    if (host.row_offsets[t + 1] - host.row_offsets[t] == 200000)
      EXPECT_GE(cuts, 40) << "long row " << host.rows[t];
    else
      cut_short_rows += cuts > 0;
  }
  for (std::int64_t c = 0; c < host.chunk_count(); ++c) {
    const std::int64_t t = host.chunk_first_rows[c];
    chunks_inside_one_row += host.row_offsets[t] < host.chunk_offsets[c] &&
                             host.row_offsets[t + 1] > host.chunk_offsets[c + 1];
  }
  std::cout << "  host part: " << host.nnz() << " entries, " << host.rows.size() << " rows, "
            << host.chunk_count() << " chunks, " << cut_short_rows << " short rows cut, "
            << chunks_inside_one_row << " chunks inside one row\n";
  EXPECT_GT(cut_short_rows, 10);
  EXPECT_GT(chunks_inside_one_row, 100);

  expect_host_part_matches_for_both_value_kinds<float>(lengths, cols, 1, rng);
  expect_host_part_matches_for_both_value_kinds<double>(lengths, cols, 1, rng);
}

TEST(CpuGpuSplitHostPart, RowsEndingExactlyOnChunkBoundariesAreNotCarried) {
  // 64 rows of 1 + kHostChunkMinEntries at K = 1: 64 chunks, each exactly one row.
  const std::uint64_t seed = 20261125;
  std::cout << "cpu_gpu_split host part test (rows on chunk boundaries): seed " << seed << "\n";
  std::mt19937_64 rng(seed);
  const std::vector<std::int64_t> lengths(64, 1 + kHostChunkMinEntries);
  const CpuGpuSplitLayout<float> split =
      make_cpu_gpu_split_layout<float>(matrix_of_row_lengths(lengths, 5000, [] { return 1.0; }), 1);
  ASSERT_EQ(split.host.chunk_count(), 64);
  for (std::int64_t t = 0; t < 64; ++t) {
    EXPECT_EQ(split.host.chunk_first_rows[t], t);
    EXPECT_EQ(boundaries_cutting(split.host, t), 0);
  }
  expect_host_part_matches_for_both_value_kinds<float>(lengths, 5000, 1, rng);
  expect_host_part_matches_for_both_value_kinds<double>(lengths, 5000, 1, rng);
}

TEST(CpuGpuSplitHostPart, ASingleRowPartIsSplitAcrossChunks) {
  const std::uint64_t seed = 20261126;
  std::cout << "cpu_gpu_split host part test (single row): seed " << seed << "\n";
  std::mt19937_64 rng(seed);
  // One row of 300,000 entries beside empty and short rows; at K = 3 the host part is that row.
  std::vector<std::int64_t> lengths{0, 2, 300000, 3, 0};
  const CpuGpuSplitLayout<double> split = make_cpu_gpu_split_layout<double>(
      matrix_of_row_lengths(lengths, 400000, [] { return 1.0; }), 3);
  ASSERT_EQ(split.host.rows, (std::vector<std::int32_t>{2}));
  EXPECT_EQ(split.host.chunk_count(), 299997 / kHostChunkMinEntries);
  EXPECT_EQ(boundaries_cutting(split.host, 0), split.host.chunk_count() - 1);
  expect_host_part_matches_for_both_value_kinds<float>(lengths, 400000, 3, rng);
  expect_host_part_matches_for_both_value_kinds<double>(lengths, 400000, 3, rng);
  // And a single short row: one chunk, no carry.
  lengths = {1, 9, 2};
  expect_host_part_matches_for_both_value_kinds<float>(lengths, 20, 2, rng);
  expect_host_part_matches_for_both_value_kinds<double>(lengths, 20, 2, rng);
}

template <typename Value>
void expect_empty_host_part_writes_nothing() {
  // Every row within K: no host entries, no chunks, no carry slots.
  const CsrMatrix<double> m = matrix_of_row_lengths({3, 0, 5, 1}, 10, [] { return 2.0; });
  const CpuGpuSplitLayout<Value> split = make_cpu_gpu_split_layout<Value>(m, 5);
  const HostCooPart<Value>& host = split.host;
  EXPECT_TRUE(host.rows.empty());
  EXPECT_EQ(host.nnz(), 0);
  EXPECT_EQ(host.chunk_count(), 0);
  EXPECT_EQ(host.carry_slots(), 0);
  EXPECT_EQ(host.chunk_offsets, (std::vector<std::int64_t>{0}));
  const std::vector<Value> x(10, Value(1));
  Value untouched[2] = {Value(-7), Value(-7)};
  multiply_host_part(host, x.data(), &untouched[0], &untouched[1]);
  EXPECT_EQ(untouched[0], Value(-7));
  EXPECT_EQ(untouched[1], Value(-7));
}

TEST(CpuGpuSplitHostPart, AnEmptyPartWritesNothing) {
  expect_empty_host_part_writes_nothing<float>();
  expect_empty_host_part_writes_nothing<double>();
}

// The calibration's round-trip sample (models/families/cpu_gpu/cpu_gpu_fit.cpp): rows of K
// entries and one of K + 1 leave the host a single entry in a single task, the rest to the ELL
// part.
TEST(CpuGpuSplitHostPart, OneRowOneEntryPastKIsAOneEntryHostPart) {
  std::vector<std::int64_t> lengths(4096, 8);
  lengths[0] = 9;
  const CsrMatrix<double> m = matrix_of_row_lengths(lengths, 4096, [] { return 1.0; });
  const CpuGpuSplitLayout<double> split = make_cpu_gpu_split_layout<double>(m, 8);
  EXPECT_EQ(split.host.nnz(), 1);
  EXPECT_EQ(split.host.rows, std::vector<std::int32_t>{0});
  EXPECT_EQ(split.host.chunk_count(), 1);
  EXPECT_EQ(split.ell_values.size(), 4096U * 8U);
}

// ---- rules -------------------------------------------------------------------------------

MatrixFeatures power_law_features() {
  // 100000 rows of 8, 2000 of 64, 10 of 5000, 500 empty; 200000 columns.
  MatrixFeatures f =
      part_features(MatrixFeatures{.cols = 200000}, {{8, 100000}, {64, 2000}, {5000, 10}}, 500);
  f.x_sectors_per_nonzero = 1.0;
  return f;
}

// GPU part: 1e-6 ms per ELL slot; host part: 1e-4 ms per non-zero plus 1e-7 ms per value moved.
class SyntheticCosts final : public PartTimePredictor {
 public:
  std::optional<double> part_ms(const FormatPart& part) const override {
    ++calls;
    if (part.runs == FormatPart::Runs::gpu) {
      const double slots = static_cast<double>(part.features.rows) *
                           CudaEllRules::params_of(part.candidate).ell_width;
      return gpu_ms_per_slot * slots;
    }
    if (host_unknown) return std::nullopt;
    return 1e-4 * static_cast<double>(part.features.nnz) +
           1e-7 * static_cast<double>(part.transfer_values);
  }
  double gpu_ms_per_slot = 1e-6;
  bool host_unknown = false;
  mutable int calls = 0;
};

TEST(CpuGpuSplitRules, PartsAreTheTruncatedEllAndTheRemainderWithItsCopies) {
  const CpuGpuSplitRules rules;
  const MatrixFeatures f = power_law_features();
  const Candidate candidate = CpuGpuSplitRules::candidate_for(16, 256, f.rows, testing::h100());
  const std::vector<FormatPart> parts = rules.parts(f, candidate);
  ASSERT_EQ(parts.size(), 2U);
  const FormatPart& gpu = parts[0];
  const FormatPart& host = parts[1];
  const EllCooSplit split = ell_coo_split(f, 16);
  EXPECT_EQ(gpu.runs, FormatPart::Runs::gpu);
  EXPECT_EQ(gpu.candidate.format, kCudaEllFormatId);
  EXPECT_EQ(CudaEllRules::params_of(gpu.candidate).ell_width, 16U);
  EXPECT_EQ(gpu.candidate.launch, candidate.launch);
  EXPECT_EQ(gpu.features.rows, f.rows);  // every row, the empty ones too
  EXPECT_EQ(gpu.features.nnz, split.ell_nnz);
  EXPECT_EQ(gpu.features.row_length_max, 16);
  EXPECT_EQ(gpu.transfer_values, 0U);
  EXPECT_EQ(host.runs, FormatPart::Runs::host);
  EXPECT_EQ(host.candidate.format, kCpuCooFormatId);
  EXPECT_EQ(host.features.rows, 2010);
  EXPECT_EQ(host.features.nnz, split.coo_nnz);
  EXPECT_EQ(host.features.nnz, 2000 * 48 + 10 * 4984);
  // x down (200000 columns) and one value per touched row up.
  EXPECT_EQ(host.transfer_values, 200000U + 2010U);
  // Its multiply runs as many tasks as the layout cuts its entries into chunks.
  EXPECT_EQ(host.host_tasks, (2000 * 48 + 10 * 4984) / kHostChunkMinEntries);
}

TEST(CpuGpuSplitRules, DeviceBytesCountTheGpuPartOnly) {
  const CpuGpuSplitRules rules;
  const MatrixFeatures f = power_law_features();
  const Candidate candidate = CpuGpuSplitRules::candidate_for(16, 256, f.rows, testing::h100());
  // rows * K slots of (column + value), and per touched row its index + one partial value.
  EXPECT_EQ(rules.device_bytes(f, Precision::fp64, candidate),
            static_cast<std::uint64_t>(f.rows * 16 * 12 + 2010 * 12));
  EXPECT_EQ(rules.device_bytes(f, Precision::fp32, candidate),
            static_cast<std::uint64_t>(f.rows * 16 * 8 + 2010 * 8));
}

TEST(CpuGpuSplitRules, IsOfferedWhereCsrWouldNotFitTheBudget) {
  // 10^8 rows of 20 non-zeros: CSR needs ~25 GB in fp64; the split at K = 1 keeps 1/20 of the
  // values (and their columns) on the device.
  const MatrixFeatures f =
      part_features(MatrixFeatures{.cols = 100'000'000}, {{20, 99'000'000}, {21, 1'000'000}});
  const CudaCsrVectorRules csr;
  const CpuGpuSplitRules split;
  const std::uint64_t budget = std::uint64_t{8} << 30;
  EXPECT_FALSE(csr.admissible(f, testing::h100(), Precision::fp64, budget));
  EXPECT_TRUE(split.admissible(f, testing::h100(), Precision::fp64, budget));
  // ...with a candidate within it, with or without models.
  const auto fits = [&](const std::vector<Candidate>& space) {
    return std::any_of(space.begin(), space.end(), [&](const Candidate& c) {
      return split.device_bytes(f, Precision::fp64, c) <= budget;
    });
  };
  EXPECT_TRUE(fits(split.candidates(f, testing::h100())));
  EXPECT_TRUE(fits(split.candidates_chosen_by(SyntheticCosts{}, f, testing::h100())));
  EXPECT_FALSE(split.admissible(f, testing::h100(), Precision::fp64, 1 << 20));
}

TEST(CpuGpuSplitRules, IsNotAdmissibleWhereNoRowLeavesTheHostARemainder) {
  const CpuGpuSplitRules rules;
  const MatrixFeatures diagonal = part_features(MatrixFeatures{.cols = 1000}, {{1, 1000}});
  EXPECT_FALSE(rules.admissible(diagonal, testing::h100(), Precision::fp64, ~std::uint64_t{0}));
  EXPECT_TRUE(rules.candidates(diagonal, testing::h100()).empty());
  EXPECT_FALSE(rules.admissible(power_law_features(), testing::eight_core_cpu(), Precision::fp64,
                                ~std::uint64_t{0}));
}

TEST(CpuGpuSplitRules, ModelFreeCandidatesTakeHybsWidthsWithinOneAndTheLongestRowMinusOne) {
  const CpuGpuSplitRules rules;
  const MatrixFeatures f = power_law_features();
  std::set<std::uint32_t> widths;
  for (const Candidate& c : rules.candidates(f, testing::h100())) {
    widths.insert(CpuGpuSplitRules::params_of(c).ell_width);
    EXPECT_TRUE(rules.is_valid(c, f, testing::h100()));
  }
  // Bell-Garland's K is 8 (all 102010 rows with >= 8 reach max(4096, rows/3)); round(mean) and
  // ceil(mean + stddev) from the DF.
  EXPECT_TRUE(widths.contains(8U));
  for (const std::uint32_t w : widths) {
    EXPECT_GE(w, 1U);
    EXPECT_LT(w, 5000U);
  }
  // A two-row-length matrix whose HYB width is its longest row: clamped to leave a remainder.
  const MatrixFeatures regular = part_features(MatrixFeatures{.cols = 10000}, {{3, 9000}, {4, 9000}});
  for (const Candidate& c : rules.candidates(regular, testing::h100()))
    EXPECT_LE(CpuGpuSplitRules::params_of(c).ell_width, 3U);
}

TEST(CpuGpuSplitRules, ChoosesTheKWhereTheSyntheticCostsBalance) {
  const CpuGpuSplitRules rules;
  const MatrixFeatures f = power_law_features();
  const SyntheticCosts costs;
  const std::vector<Candidate> chosen = rules.candidates_chosen_by(costs, f, testing::h100());
  const int calls_to_choose = costs.calls;
  // One per block size, and K = 1 for tight budgets.
  ASSERT_EQ(chosen.size(), kCpuGpuSplitBlockSizes.size() + 1);
  EXPECT_EQ(chosen.back(), CpuGpuSplitRules::candidate_for(1, 256, f.rows, testing::h100()));
  // Brute force over every K with a remainder: the least max(GPU, host).
  std::int64_t best_k = 0;
  double best_ms = std::numeric_limits<double>::infinity();
  for (std::int64_t k = 1; k < f.row_length_max; ++k) {
    const std::vector<FormatPart> parts =
        rules.parts(f, CpuGpuSplitRules::candidate_for(k, 256, f.rows, testing::h100()));
    const double ms = std::max(*costs.part_ms(parts[0]), *costs.part_ms(parts[1]));
    if (ms < best_ms) {
      best_ms = ms;
      best_k = k;
    }
  }
  std::cout << "synthetic costs: balanced K = " << best_k << ", " << best_ms << " ms\n";
  ASSERT_GT(best_k, 1);
  ASSERT_LT(best_k, f.row_length_max - 1) << "the test wants an interior crossing";
  for (const Candidate& c : std::span(chosen).first(kCpuGpuSplitBlockSizes.size())) {
    EXPECT_EQ(CpuGpuSplitRules::params_of(c).ell_width, static_cast<std::uint32_t>(best_k));
    // A model-chosen K revalidates structurally though candidates() does not offer it.
    EXPECT_TRUE(rules.is_valid(c, f, testing::h100()));
  }
  // Binary search: per block size about 2 log2(5000) splits of two parts each, far fewer
  // predictions than the 4999 thresholds.
  EXPECT_LT(calls_to_choose, 3 * 2 * 2 * 16);
}

TEST(CpuGpuSplitRules, KeepsTheHostARemainderWhenTheGpuIsAlwaysFaster) {
  const CpuGpuSplitRules rules;
  SyntheticCosts costs;
  costs.gpu_ms_per_slot = 1e-15;
  const MatrixFeatures f = power_law_features();
  const std::vector<Candidate> chosen = rules.candidates_chosen_by(costs, f, testing::h100());
  ASSERT_EQ(chosen.size(), kCpuGpuSplitBlockSizes.size() + 1);
  for (const Candidate& c : std::span(chosen).first(kCpuGpuSplitBlockSizes.size()))
    EXPECT_EQ(CpuGpuSplitRules::params_of(c).ell_width, 4999U);
}

TEST(CpuGpuSplitRules, OffersNothingChosenWhereTheHostPartCannotBePredicted) {
  const CpuGpuSplitRules rules;
  SyntheticCosts costs;
  costs.host_unknown = true;
  EXPECT_TRUE(rules.candidates_chosen_by(costs, power_law_features(), testing::h100()).empty());
}

TEST(CpuGpuSplitRules, RevalidatesStoredPlansStructurally) {
  const CpuGpuSplitRules rules;
  const MatrixFeatures f = power_law_features();
  const DeviceInfo device = testing::h100();
  EXPECT_TRUE(rules.is_valid(CpuGpuSplitRules::candidate_for(1234, 512, f.rows, device), f, device));
  EXPECT_TRUE(rules.is_valid(CpuGpuSplitRules::candidate_for(4999, 128, f.rows, device), f, device));
  // K = 0 (no GPU part), K = the longest row (no host part) and beyond.
  EXPECT_FALSE(rules.is_valid(CpuGpuSplitRules::candidate_for(0, 256, f.rows, device), f, device));
  EXPECT_FALSE(rules.is_valid(CpuGpuSplitRules::candidate_for(5000, 256, f.rows, device), f, device));
  EXPECT_FALSE(rules.is_valid(CpuGpuSplitRules::candidate_for(9000, 256, f.rows, device), f, device));
  // A block size the kernel is not built for, a grid for another matrix, parameters of another
  // shape.
  Candidate c = CpuGpuSplitRules::candidate_for(16, 256, f.rows, device);
  c.launch.block_size = 96;
  EXPECT_FALSE(rules.is_valid(c, f, device));
  c = CpuGpuSplitRules::candidate_for(16, 256, f.rows, device);
  c.launch.grid_size += 1;
  EXPECT_FALSE(rules.is_valid(c, f, device));
  c.params = FieldSet({{"slice_height", std::int64_t{32}}});
  EXPECT_FALSE(rules.is_valid(c, f, device));
  c = CpuGpuSplitRules::candidate_for(16, 256, f.rows, device);
  c.format = kCudaEllFormatId;
  EXPECT_FALSE(rules.is_valid(c, f, device));
}

template <typename Fn>
void expect_invalid_argument_mentioning(Fn&& fn, const std::string& text) {
  try {
    fn();
    FAIL() << "expected invalid_argument mentioning '" << text << "'";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument) << e.what();
    EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
  }
}

TEST(CpuGpuSplitBuild, RejectsBadStoredParametersPrecisely) {
  const FormatEntry* entry = format_registry().find(kCpuGpuSplitFormatId);
  ASSERT_NE(entry, nullptr) << "cpu_gpu_split is registered";
  EXPECT_EQ(entry->rules->name(), "cpu_gpu_split");
  const auto device = make_cpu_device();
  // Rows of length 1, 2, 4.
  const CsrMatrix<double> m{3, 4, {0, 1, 3, 7}, {0, 0, 1, 0, 1, 2, 3}, {1, 2, 3, 4, 5, 6, 7}};
  const Candidate good = CpuGpuSplitRules::candidate_for(2, 256, 3, testing::h100());
#if SPMVD_WITH_CUDA
  Candidate c = good;
  c.params = FieldSet::of(CpuGpuSplitParams{.ell_width = 0});
  expect_invalid_argument_mentioning(
      [&] { entry->build(m, Precision::fp64, c, *device); }, "ell_width 0 is outside [1, longest row - 1] = [1, 3]");
  c.params = FieldSet::of(CpuGpuSplitParams{.ell_width = 4});
  expect_invalid_argument_mentioning(
      [&] { entry->build(m, Precision::fp64, c, *device); }, "ell_width 4 is outside [1, longest row - 1] = [1, 3]");
  c = good;
  c.launch.block_size = 100;
  expect_invalid_argument_mentioning([&] { entry->build(m, Precision::fp64, c, *device); },
                                     "block_size 100");
  c = good;
  c.launch.grid_size = 0;
  expect_invalid_argument_mentioning([&] { entry->build(m, Precision::fp64, c, *device); },
                                     "grid_size is 0");
  c = good;
  c.params = {};
  expect_invalid_argument_mentioning([&] { entry->build(m, Precision::fp64, c, *device); },
                                     "cpu_gpu_split: field 'ell_width' is missing");
#endif
  // Good parameters on the host: the split needs a GPU.
  try {
    entry->build(m, Precision::fp64, good, *device);
    FAIL() << "built cpu_gpu_split on the CPU device";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::failed_precondition) << e.what();
  }
}

}  // namespace
}  // namespace spmvd
