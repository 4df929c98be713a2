// The BRO formats' rules (cuda_bro_ell, cuda_bro_coo, cuda_bro_hyb): candidates from their own
// features, device bytes equal to the bytes of the host layouts the builders upload, stored
// plans validated, bad parameters refused with a message that says which.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <random>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "bench/generators.hpp"
#include "core/error.hpp"
#include "kernels/build_source.hpp"
#include "kernels/device.hpp"
#include "kernels/format_parts.hpp"
#include "kernels/format_registry.hpp"
#include "kernels/formats/common/bar_reorder.hpp"
#include "kernels/formats/common/bro_decode.hpp"
#include "kernels/formats/common/bro_stream.hpp"
#include "kernels/formats/cuda_bro_coo/cuda_bro_coo_rules.hpp"
#include "kernels/formats/cuda_bro_ell/cuda_bro_ell_rules.hpp"
#include "kernels/formats/cuda_bro_hyb/cuda_bro_hyb_rules.hpp"
#include "kernels/formats/cuda_ehyb/cuda_ehyb_features.hpp"
#include "kernels/formats/cuda_hyb/cuda_hyb_rules.hpp"
#include "kernels/tests/conformance.hpp"
#include "kernels/tests/hand_written.hpp"
#include "kernels/tests/test_matrices.hpp"
#include "partition/rcm_order.hpp"
#include "partition/symmetric_permutation.hpp"
#include "tuner/feature_extraction.hpp"

namespace spmvd {
namespace {

template <typename T>
std::uint64_t vector_bytes(const std::vector<T>& v) {
  return v.size() * sizeof(T);
}

// What BroEllPart uploads for a layout.
std::uint64_t uploaded_bytes(const bro::BroEllLayout<double>& l, std::size_t order_entries) {
  return vector_bytes(l.col_offsets) + vector_bytes(l.word_offsets) + vector_bytes(l.bit_alloc) +
         vector_bytes(l.stream) + vector_bytes(l.values) + order_entries * sizeof(std::int32_t);
}
// What BroCooPart uploads.
std::uint64_t uploaded_bytes(const bro::BroCooLayout<double>& l) {
  return vector_bytes(l.first_rows) + vector_bytes(l.last_rows) + vector_bytes(l.bits) +
         vector_bytes(l.word_offsets) + vector_bytes(l.stream) + vector_bytes(l.col_indices) +
         vector_bytes(l.values);
}

std::string message_of(const auto& call) {
  try {
    call();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no throw)";
}

// A matrix with empty rows, a shorter last slice and a long row (conformance's heavy tail).
const testing::NamedMatrix& sample_matrix() {
  static const std::vector<testing::NamedMatrix> all =
      testing::conformance_matrices(testing::test_seed());
  for (const auto& named : all)
    if (named.name == "heavy_tail_2000x3000") return named;
  throw std::logic_error("heavy_tail_2000x3000 missing");
}

// What cuda_bro_ell's kernel computes for a choice, emulated on the host with its own decode
// (bro_decode.hpp): under RCM x gathered first (x_perm[i] = x[order[i]], the gather kernel), then
// stream row g's sum, the sub-rows of a row added, written to y[order[row]] (BAR, RCM) or
// y[row]. Only the launches and the shuffles are left to the GPU.
// `given`: the BAR or RCM order to run in (a stored one), else computed.
std::vector<double> emulate_bro_ell(const CsrMatrix<double>& m, const BroEllChoice& choice,
                                    const std::vector<double>& caller_x,
                                    std::span<const std::int32_t> given = {}) {
  std::vector<std::int32_t> order;
  const auto l = bro::make_bro_ell_layout<double>(bro_ell_stream_rows(m, choice, order, given),
                                                  choice.params.slice_height,
                                                  bro_words_per_symbol(choice.params.variant));
  std::vector<double> x = caller_x;
  if (choice.params.reorder == kBroReorderRcm)
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = caller_x[static_cast<std::size_t>(order[i])];
  std::vector<double> y(static_cast<std::size_t>(m.rows), 0.0);
  const std::int64_t h = l.slice_height;
  for (std::int64_t g = 0; g < l.rows; ++g) {
    const std::int64_t s = g / h;
    const std::int64_t height = std::min(h, l.rows - s * h);
    const std::int64_t first_col = l.col_offsets[static_cast<std::size_t>(s)];
    const std::int64_t num_col = l.col_offsets[static_cast<std::size_t>(s + 1)] - first_col;
    const std::uint32_t* stream = l.stream.data() + l.word_offsets[static_cast<std::size_t>(s)];
    const std::int64_t row_words = (l.word_offsets[static_cast<std::size_t>(s + 1)] -
                                    l.word_offsets[static_cast<std::size_t>(s)]) /
                                   height;
    const double sum =
        l.words_per_symbol == 4
            ? bro::bro_ell_row_sum<double, 4>(stream, height, g - s * h, row_words,
                                              l.bit_alloc.data() + first_col, num_col,
                                              l.values.data() + first_col * h, x.data())
            : bro::bro_ell_row_sum<double, 1>(stream, height, g - s * h, row_words,
                                              l.bit_alloc.data() + first_col, num_col,
                                              l.values.data() + first_col * h, x.data());
    const std::int64_t row = g / choice.threads_per_row;
    y[static_cast<std::size_t>(order.empty() ? row : order[static_cast<std::size_t>(row)])] += sum;
  }
  return y;
}

std::vector<double> csr_reference(const CsrMatrix<double>& m, const std::vector<double>& x) {
  std::vector<double> y(static_cast<std::size_t>(m.rows), 0.0);
  for (std::int64_t r = 0; r < m.rows; ++r)
    for (auto k = m.row_offsets[static_cast<std::size_t>(r)];
         k < m.row_offsets[static_cast<std::size_t>(r + 1)]; ++k)
      y[static_cast<std::size_t>(r)] +=
          m.values[static_cast<std::size_t>(k)] *
          x[static_cast<std::size_t>(m.col_indices[static_cast<std::size_t>(k)])];
  return y;
}

void expect_close(const std::vector<double>& expected, const std::vector<double>& actual) {
  ASSERT_EQ(expected.size(), actual.size());
  for (std::size_t i = 0; i < expected.size(); ++i)
    ASSERT_NEAR(actual[i], expected[i], 1e-12 * (1.0 + std::abs(expected[i]))) << "row " << i;
}

// Every layout (BAR's and RCM's orders undone, sub-rows added), and BRO-HYB's two parts at
// HYB's K, on every conformance matrix: y in the caller's order equals CSR's. RCM on the square
// ones (it needs a square matrix); BRO-HYB has no RCM layout.
TEST(BroFormats, EmulatedKernelsOfEveryOfferedLayoutEqualCsrInTheCallersOrder) {
  const std::uint64_t seed = testing::test_seed();
  std::cout << "seed " << seed << " (SPMVD_TEST_SEED)\n";
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  for (const auto& [name, m] : testing::conformance_matrices(seed)) {
    std::vector<double> x(static_cast<std::size_t>(m.cols));
    for (double& v : x) v = value(rng);
    const std::vector<double> expected = csr_reference(m, x);
    const std::int64_t width = CudaHybRules::bell_garland_ell_width(extract_features(m));
    for (std::size_t i = 0; i < kBroEllChoices.size(); ++i) {
      SCOPED_TRACE(name + " layout " + std::to_string(i));
      if (kBroEllChoices[i].params.reorder == kBroReorderRcm) {
        if (m.rows == m.cols) expect_close(expected, emulate_bro_ell(m, kBroEllChoices[i], x));
        continue;
      }
      expect_close(expected, emulate_bro_ell(m, kBroEllChoices[i], x));
      // BRO-HYB: its ELL part, then its COO part adds.
      std::vector<double> y = emulate_bro_ell(bro::leading_entries(m, width), kBroEllChoices[i], x);
      const std::vector<double> rest = bro::multiply_bro_coo(
          bro::make_bro_coo_layout<double>(bro::trailing_entries(m, width), 8), m.rows, x);
      for (std::size_t r = 0; r < y.size(); ++r) y[r] += rest[r];
      expect_close(expected, y);
    }
  }
}

// Device bytes come from the feature walk, which runs no BAR: exact for every layout in the
// matrix's order, an upper bound for the BAR layouts (bar_order keeps a window's order unless
// its clustering is no larger, bar_reorder.hpp). Every layout, offered or not: a stored plan's
// bytes are counted whatever today's bound says.
TEST(CudaBroEllRules, DeviceBytesEqualTheBuiltLayoutAndBoundItUnderBar) {
  const CsrMatrix<double>& m = sample_matrix().matrix;
  const MatrixFeatures features = extract_features(m);
  const CudaBroEllRules rules;
  std::vector<Candidate> candidates;
  for (const BroEllChoice& choice : kBroEllChoices)
    if (choice.params.reorder != kBroReorderRcm)  // not on a 2000 x 3000 matrix: below
      candidates.push_back(Candidate{.format = kCudaBroEllFormatId,
                                     .params = FieldSet::of(choice.params),
                                     .launch = {.block_size = kBroBlockSize,
                                                .threads_per_row = choice.threads_per_row,
                                                .grid_size = 1}});
  for (const Candidate& c : candidates) {
    const std::size_t index =
        bro_ell_choice_index("test", CudaBroEllRules::params_of(c), c.launch.threads_per_row);
    const BroEllChoice& choice = kBroEllChoices[index];
    std::vector<std::int32_t> order;
    const auto layout = bro::make_bro_ell_layout<double>(
        bro_ell_stream_rows(m, choice, order), choice.params.slice_height,
        bro_words_per_symbol(choice.params.variant));
    if (choice.params.reorder == kBroReorderBar)
      EXPECT_LE(uploaded_bytes(layout, order.size()),
                rules.device_bytes(features, Precision::fp64, c))
          << "layout " << index;
    else
      EXPECT_EQ(rules.device_bytes(features, Precision::fp64, c),
                uploaded_bytes(layout, order.size()))
          << "layout " << index;
  }
  // The heavy tail's longest row is over 20x the mean, within it at 4 threads a row: the
  // offered candidates are the 4-thread layouts.
  const std::vector<Candidate> offered = rules.candidates(features, testing::h100());
  std::size_t four_thread_layouts = 0;
  for (const BroEllChoice& choice : kBroEllChoices)
    four_thread_layouts +=
        choice.threads_per_row == 4 && choice.params.reorder != kBroReorderRcm ? 1 : 0;
  ASSERT_FALSE(bro_ell_critical_path_bounded(features, 1));
  ASSERT_TRUE(bro_ell_critical_path_bounded(features, 4));
  EXPECT_EQ(offered.size(), four_thread_layouts);
  for (const Candidate& c : offered) {
    EXPECT_EQ(c.launch.threads_per_row, 4u);
    EXPECT_TRUE(rules.is_valid(c, features, testing::h100()));
    EXPECT_EQ(c.launch.block_size, kBroBlockSize);
    EXPECT_GT(c.launch.grid_size, 0u);
  }
  EXPECT_TRUE(rules.admissible(features, testing::h100(), Precision::fp64, ~std::uint64_t{0}));
  EXPECT_FALSE(
      rules.admissible(features, testing::eight_core_cpu(), Precision::fp64, ~std::uint64_t{0}));
}

// The compressed stream is what BRO is for. On a band of 7 (1000 rows) a row's deltas are its
// first column + 1 (at most 998: 10 bits) and six 1s: 16 bits, one 32-bit word a row, 4000
// bytes against CSR's 28000 index bytes, in every order and symbol size (128-bit symbols pad
// nothing). 4 threads a row: 4 sub-rows of at most 2 entries (11 bits), a word each.
TEST(CudaBroEllRules, BandStreamIsOneWordARowInThePapersLayout) {
  const auto& all = testing::conformance_matrices(testing::test_seed());
  const auto band =
      std::find_if(all.begin(), all.end(), [](const auto& n) { return n.name == "band_7_1000"; });
  ASSERT_NE(band, all.end());
  const BroEllFeatures f = compute_bro_ell_features(band->matrix, 3);
  for (std::size_t i = 0; i < kBroEllChoices.size(); ++i) {
    const BroEllChoice& c = kBroEllChoices[i];
    if (c.params.reorder == kBroReorderRcm) continue;  // RcmOfABandIsABand
    const std::int64_t words_a_row = c.threads_per_row;
    EXPECT_EQ(f.stream_words[i], 1000 * words_a_row) << "layout " << i;
  }
}

TEST(CudaBroEllRules, OffersNothingWithoutItsFeatures) {
  MatrixFeatures features = extract_features(sample_matrix().matrix);
  features.format_features.erase("cuda_bro_ell");
  EXPECT_TRUE(CudaBroEllRules{}.candidates(features, testing::h100()).empty());
  EXPECT_FALSE(
      CudaBroEllRules{}.admissible(features, testing::h100(), Precision::fp64, ~std::uint64_t{0}));
}

// circuit-3M's shape, small: 4000 rows of 2-6 entries (row r: 2 + r % 5; 15997 in all) and 3
// rows of 2000 entries at spread columns: nnz 21997, mean 5.5; the widest stream row is 2000
// (one thread a row) or 500 (4 threads): rows * 500 = 2,001,500 > 20 * 21997, so one slice's
// decode would be the critical path of every layout.
CsrMatrix<double> circuit_like() {
  CsrMatrix<double> m;
  m.rows = 4003;
  m.cols = 4003;
  for (std::int64_t r = 0; r < m.rows; ++r) {
    const bool dense = r % 1500 == 7;  // rows 7, 1507, 3007
    const std::int64_t length = dense ? 2000 : 2 + r % 5;
    const std::int64_t step = dense ? 2 : 1;
    for (std::int64_t k = 0; k < length; ++k) {
      m.col_indices.push_back(static_cast<ColIndex>((dense ? 0 : r % 3990) + k * step));
      m.values.push_back(1.0 + static_cast<double>(k % 7));
    }
    m.row_offsets.push_back(static_cast<RowOffset>(m.col_indices.size()));
  }
  return m;
}

TEST(CudaBroEllRules, OffersNothingWhereOneSlicesWidestRowIsTheCriticalPath) {
  const CsrMatrix<double> m = circuit_like();
  validate(m);
  const MatrixFeatures features = extract_features(m);
  ASSERT_EQ(features.nnz, 21997);
  ASSERT_EQ(features.row_length_max, 2000);
  for (const std::uint32_t t : {1u, 4u})
    EXPECT_FALSE(bro_ell_critical_path_bounded(features, t)) << t << " threads a row";
  const CudaBroEllRules rules;
  EXPECT_TRUE(rules.candidates(features, testing::h100()).empty());
  EXPECT_FALSE(rules.admissible(features, testing::h100(), Precision::fp64, ~std::uint64_t{0}));
  // BRO-HYB keeps the BRO answer there: the rows' first hyb-width entries in BRO-ELL, the
  // dense rows' tails in BRO-COO.
  const CudaBroHybRules hyb;
  EXPECT_FALSE(hyb.candidates(features, testing::h100()).empty());
  EXPECT_TRUE(hyb.admissible(features, testing::h100(), Precision::fp64, ~std::uint64_t{0}));
}

// The bound itself: ceil(max / t) * rows against 20 * nnz, at the edge.
TEST(CudaBroEllRules, CriticalPathBoundIsTwentyTimesTheMeanPerStreamRow) {
  MatrixFeatures f = testing::features(100, 100, 1000);  // mean 10
  f.row_length_max = 200;                                 // 100 * 200 = 20 * 1000
  EXPECT_TRUE(bro_ell_critical_path_bounded(f, 1));
  f.row_length_max = 201;
  EXPECT_FALSE(bro_ell_critical_path_bounded(f, 1));
  EXPECT_TRUE(bro_ell_critical_path_bounded(f, 4));  // ceil(201 / 4) = 51 stream entries
  f.row_length_max = 801;                             // ceil(801 / 4) = 201
  EXPECT_FALSE(bro_ell_critical_path_bounded(f, 4));
}

TEST(CudaBroEllRules, StoredPlanWithAnotherLayoutIsInvalidAndItsBytesSayWhy) {
  const MatrixFeatures features = extract_features(sample_matrix().matrix);
  const CudaBroEllRules rules;
  Candidate c = rules.candidates(features, testing::h100()).front();
  c.launch.threads_per_row = 1;
  c.params = FieldSet::of(CudaBroEllParams{.slice_height = 48, .variant = 0, .reorder = 0});
  EXPECT_FALSE(rules.is_valid(c, features, testing::h100()));
  EXPECT_EQ(message_of([&] { rules.device_bytes(features, Precision::fp64, c); }),
            "cuda_bro_ell: slice_height 48, variant 0, reorder 0, threads_per_row 1 is not a "
            "BRO-ELL layout");
  // BAR with 4 threads a row is not offered either.
  c.params = FieldSet::of(CudaBroEllParams{
      .slice_height = 32, .variant = kBroVariantHopper, .reorder = kBroReorderBar});
  c.launch.threads_per_row = 4;
  EXPECT_FALSE(rules.is_valid(c, features, testing::h100()));
  // A stored plan of another shape names the missing field.
  c.params = FieldSet::of(CudaBroCooParams{.interval_rounds = 8});
  EXPECT_NE(message_of([&] { CudaBroEllRules::params_of(c); }).find("cuda_bro_ell"),
            std::string::npos);
}

TEST(CudaBroCooRules, DeviceBytesEqualTheBuiltLayoutAndBadRoundsAreRefused) {
  const CsrMatrix<double>& m = sample_matrix().matrix;
  const MatrixFeatures features = extract_features(m);
  const CudaBroCooRules rules;
  const std::vector<Candidate> candidates = rules.candidates(features, testing::h100());
  ASSERT_EQ(candidates.size(), kBroCooIntervalRounds.size());
  for (const Candidate& c : candidates) {
    const auto layout =
        bro::make_bro_coo_layout<double>(m, CudaBroCooRules::params_of(c).interval_rounds);
    EXPECT_EQ(rules.device_bytes(features, Precision::fp64, c), uploaded_bytes(layout));
    EXPECT_TRUE(rules.is_valid(c, features, testing::h100()));
  }
  Candidate bad = candidates.front();
  bad.params = FieldSet::of(CudaBroCooParams{.interval_rounds = 5});
  EXPECT_FALSE(rules.is_valid(bad, features, testing::h100()));
  EXPECT_EQ(message_of([&] { rules.device_bytes(features, Precision::fp64, bad); }),
            "cuda_bro_coo: interval_rounds 5 is not one of 8, 32");
}

TEST(CudaBroHybRules, SplitsAtHybsWidthAndCountsBothParts) {
  const CsrMatrix<double>& m = sample_matrix().matrix;
  const MatrixFeatures features = extract_features(m);
  const CudaBroHybRules rules;
  const std::int64_t width = CudaHybRules::bell_garland_ell_width(features);
  const std::vector<Candidate> candidates = rules.candidates(features, testing::h100());
  std::size_t hyb_layouts = 0;
  for (const BroEllChoice& choice : kBroEllChoices)
    hyb_layouts += choice.params.reorder != kBroReorderRcm ? 1 : 0;
  ASSERT_EQ(candidates.size(), hyb_layouts * kBroCooIntervalRounds.size());
  for (const Candidate& c : candidates) {
    const CudaBroHybParams p = CudaBroHybRules::params_of(c);
    EXPECT_EQ(p.ell_width, width);
    const BroEllChoice& choice =
        kBroEllChoices[bro_ell_choice_index("test", p.ell(), c.launch.threads_per_row)];
    std::vector<std::int32_t> order;
    const auto ell = bro::make_bro_ell_layout<double>(
        bro_ell_stream_rows(bro::leading_entries(m, width), choice, order),
        choice.params.slice_height, bro_words_per_symbol(choice.params.variant));
    const auto coo =
        bro::make_bro_coo_layout<double>(bro::trailing_entries(m, width), p.interval_rounds);
    const std::uint64_t built = uploaded_bytes(ell, order.size()) + uploaded_bytes(coo);
    if (choice.params.reorder == kBroReorderBar)
      EXPECT_LE(built, rules.device_bytes(features, Precision::fp64, c));
    else
      EXPECT_EQ(rules.device_bytes(features, Precision::fp64, c), built);
    EXPECT_TRUE(rules.is_valid(c, features, testing::h100()));
  }
  Candidate other_width = candidates.front();
  CudaBroHybParams p = CudaBroHybRules::params_of(other_width);
  p.ell_width += 1;
  other_width.params = FieldSet::of(p);
  EXPECT_FALSE(rules.is_valid(other_width, features, testing::h100()));
  EXPECT_EQ(message_of([&] { rules.device_bytes(features, Precision::fp64, other_width); }),
            "cuda_bro_hyb: ell_width " + std::to_string(width + 1) +
                " is not the width its features were sized at (" + std::to_string(width) + ")");
}

TEST(CudaBroHybRules, RunsAsItsBroEllPartThenItsBroCooPartEachOfItsOwnBytes) {
  const CsrMatrix<double>& m = sample_matrix().matrix;
  const MatrixFeatures features = extract_features(m);
  const CudaBroHybRules rules;
  const CudaBroEllRules ell_rules;
  const CudaBroCooRules coo_rules;
  const std::int64_t width = CudaHybRules::bell_garland_ell_width(features);
  std::int64_t coo_entries = 0, coo_rows = 0;
  for (std::int64_t r = 0; r < m.rows; ++r)
    if (m.row_length(r) > width) {
      coo_entries += m.row_length(r) - width;
      ++coo_rows;
    }
  ASSERT_GT(coo_entries, 0);  // the sample has rows longer than HYB's width
  for (const Candidate& c : rules.candidates(features, testing::h100())) {
    const CudaBroHybParams p = CudaBroHybRules::params_of(c);
    const std::vector<FormatPart> parts = rules.parts(features, c);
    ASSERT_EQ(parts.size(), 2u);
    const FormatPart& ell = parts[0];
    const FormatPart& coo = parts[1];
    // The ELL part: every row, cut to the width, as cuda_bro_ell's candidate of this layout.
    EXPECT_EQ(ell.runs, FormatPart::Runs::gpu);
    EXPECT_EQ(ell.launch, kOwnLaunch);
    EXPECT_EQ(ell.candidate.format, kCudaBroEllFormatId);
    EXPECT_EQ(ell.candidate.params, FieldSet::of(p.ell()));
    EXPECT_EQ(ell.candidate.launch, c.launch);
    EXPECT_EQ(ell.features.rows, m.rows);
    EXPECT_EQ(ell.features.nnz, m.nnz() - coo_entries);
    EXPECT_EQ(ell.features.row_length_max, std::min(width, features.row_length_max));
    // The COO part: the entries past the width, as cuda_bro_coo's candidate of its rounds.
    EXPECT_EQ(coo.launch, kOwnLaunch);
    EXPECT_EQ(coo.candidate.format, kCudaBroCooFormatId);
    EXPECT_EQ(coo.candidate.params,
              FieldSet::of(CudaBroCooParams{.interval_rounds = p.interval_rounds}));
    EXPECT_EQ(coo.features.nnz, coo_entries);
    EXPECT_EQ(coo.features.rows, coo_rows);
    EXPECT_EQ(ell.skipped_launches, 0);
    EXPECT_EQ(coo.skipped_launches, 1) << "cuda_bro_coo's y scaling: the ELL part wrote every row";
    const std::vector<Candidate> offered = coo_rules.candidates(coo.features, testing::h100());
    EXPECT_NE(std::find(offered.begin(), offered.end(), coo.candidate), offered.end());
    // Each part's bytes are its format's, and together BRO-HYB's.
    EXPECT_EQ(ell_rules.device_bytes(ell.features, Precision::fp64, ell.candidate) +
                  coo_rules.device_bytes(coo.features, Precision::fp64, coo.candidate),
              rules.device_bytes(features, Precision::fp64, c));
  }
  // No entry past the width (6,084 of its 6,400 rows are the longest): the ELL part alone.
  const CsrMatrix<double> uniform = generate_matrix("stencil2d:n=80,points=5");
  const MatrixFeatures uniform_features = extract_features(uniform);
  const std::vector<Candidate> uniform_candidates =
      rules.candidates(uniform_features, testing::h100());
  ASSERT_FALSE(uniform_candidates.empty());
  const std::vector<FormatPart> alone = rules.parts(uniform_features, uniform_candidates.front());
  ASSERT_EQ(alone.size(), 1u);
  EXPECT_EQ(alone.front().candidate.format, kCudaBroEllFormatId);
  EXPECT_EQ(alone.front().features.nnz, uniform.nnz());
}

// The feature walk's sizes are those of the transformed matrices it does not build: the rows
// cut into 4 sub-rows, the first K entries of every row, both; and the BRO-COO sizes from the
// trailing entries' row offsets are those of the trailing entries. Every conformance matrix
// (empty rows, a short last slice, a heavy tail), K from 0 to past the longest row.
TEST(BroFormats, FeatureWalkSizesEqualThoseOfTheTransformedMatrices) {
  for (const auto& named : testing::conformance_matrices(testing::test_seed())) {
    const CsrMatrix<double>& m = named.matrix;
    for (const std::int64_t width : {std::int64_t{0}, std::int64_t{1}, std::int64_t{3},
                                     std::int64_t{7}, std::int64_t{1} << 40}) {
      const CsrMatrix<double> leading = bro::leading_entries(m, width);
      for (const std::uint32_t h : {32u, 256u}) {
        const bro::BroEllWalkSizes walk = bro::bro_ell_walk_sizes(m, h, 4, width);
        EXPECT_EQ(walk.whole, bro::bro_ell_size(m, h, 1)) << named.name << " h " << h;
        EXPECT_EQ(walk.split, bro::bro_ell_size(bro::split_rows(m, 4), h, 1))
            << named.name << " h " << h;
        EXPECT_EQ(walk.leading, bro::bro_ell_size(leading, h, 1))
            << named.name << " h " << h << " K " << width;
        EXPECT_EQ(walk.leading_split, bro::bro_ell_size(bro::split_rows(leading, 4), h, 1))
            << named.name << " h " << h << " K " << width;
      }
      const std::vector<RowOffset> rest = bro::trailing_offsets(m, width);
      const CsrMatrix<double> trailing = bro::trailing_entries(m, width);
      EXPECT_EQ(rest, trailing.row_offsets) << named.name << " K " << width;
      for (const std::uint32_t rounds : kBroCooIntervalRounds) {
        // The built layout's interval widths come from the per-entry rows (interval_bits).
        const auto built = bro::make_bro_coo_layout<double>(trailing, rounds);
        EXPECT_EQ(bro::bro_coo_size(rest, rounds),
                  (bro::BroCooSize{built.intervals(), built.word_offsets.back()}))
            << named.name << " K " << width << " rounds " << rounds;
      }
    }
  }
}

// BAR keeps a window's order unless its clustering is no larger, so the identity order's sizes
// bound the BAR layout's in every array (what the rules' device bytes rely on).
TEST(BroFormats, BarLayoutIsNeverLargerThanTheIdentityOrders) {
  for (const auto& named : testing::conformance_matrices(testing::test_seed()))
    for (const std::uint32_t h : {32u, 256u}) {
      const bro::BroEllSize identity = bro::bro_ell_size(named.matrix, h, 1);
      const bro::BroEllSize bar =
          bro::bro_ell_size(bro::permute_rows(named.matrix, bro::bar_order(named.matrix, h)), h, 1);
      EXPECT_LE(bar.stream_words, identity.stream_words) << named.name << " h " << h;
      EXPECT_LE(bar.columns, identity.columns) << named.name << " h " << h;
      EXPECT_LE(bar.value_slots, identity.value_slots) << named.name << " h " << h;
    }
}

// cuda_bro_hyb's hook takes its ELL part from cuda_bro_ell's walk (same K) and gets what a walk
// of its own gives.
TEST(CudaBroHybRules, ReusesBroEllsWalkAndGetsTheSameSizes) {
  const CsrMatrix<double>& m = sample_matrix().matrix;
  const MatrixFeatures features = extract_features(m);
  const std::int64_t width = CudaHybRules::bell_garland_ell_width(features);
  const std::optional<BroEllFeatures> ell = cuda_bro_ell_features(features);
  ASSERT_TRUE(ell.has_value());
  EXPECT_EQ(ell->hyb_ell_width, width);
  EXPECT_EQ(compute_bro_hyb_features(m, width, ell), compute_bro_hyb_features(m, width));
  EXPECT_EQ(cuda_bro_hyb_features(features), compute_bro_hyb_features(m, width));
}

// A band of 7 (rows r - 3 .. r + 3) of `rows` rows whose rows and columns are renumbered by a
// seeded random permutation: a 1-D stencil whose numbering lost its locality (issue 16's
// renumbered class).
CsrMatrix<double> renumbered_band(std::int64_t rows, std::uint64_t seed) {
  return renumber_symmetric(
      generate_matrix("banded:rows=" + std::to_string(rows) + ",bandwidth=3"), seed);
}

Candidate bro_ell_candidate(const BroEllChoice& choice) {
  return Candidate{
      .format = kCudaBroEllFormatId,
      .params = FieldSet::of(choice.params),
      .launch = {
          .block_size = kBroBlockSize, .threads_per_row = choice.threads_per_row, .grid_size = 1}};
}

// The renumbered band is what RCM is for: its order gives the band back (bandwidth 3 of
// ~rows), the deltas shrink from ~12 bits to 3 or fewer (a row's stream from three words to one),
// and x sectors per non-zero fall from ~0.7 to ~0.03; every RCM layout moves fewer bytes than the
// same layout in the caller's order, gather included, so all are offered; the built layout's bytes
// are the rules' (plus the gather's per-multiply reads) and its emulated kernel, x gathered and y
// scattered back, equals CSR.
TEST(CudaBroEllRules, RcmGivesARenumberedBandItsBandBackAndIsOfferedThere) {
  const std::uint64_t seed = testing::test_seed();
  std::cout << "seed " << seed << " (SPMVD_TEST_SEED)\n";
  const CsrMatrix<double> m = renumbered_band(3000, seed);
  // A standard pass does not size RCM (too costly for a tuning of few multiplies): no RCM
  // layout is offered from it.
  const MatrixFeatures standard = extract_features(m);
  ASSERT_TRUE(cuda_bro_ell_features(standard).has_value());
  EXPECT_EQ(cuda_bro_ell_features(standard)->rcm_sized, 0);
  for (const Candidate& c : CudaBroEllRules{}.candidates(standard, testing::h100()))
    EXPECT_NE(CudaBroEllRules::params_of(c).reorder, kBroReorderRcm);
  const MatrixFeatures features = extract_features(m, format_registry(), FeatureEffort::thorough);
  const std::optional<BroEllFeatures> own = cuda_bro_ell_features(features);
  ASSERT_TRUE(own.has_value());
  std::cout << "renumbered band 7 of 3000: bandwidth " << own->bandwidth << " -> "
            << own->rcm_bandwidth << ", x sectors per non-zero " << features.x_sectors_per_nonzero
            << " -> " << own->rcm_sectors_per_nonzero << "\n";
  EXPECT_EQ(own->bandwidth, matrix_bandwidth(m));
  EXPECT_GT(own->bandwidth, 2000);
  EXPECT_EQ(own->rcm_bandwidth, matrix_bandwidth(m, rcm_order(m)));
  EXPECT_LE(own->rcm_bandwidth, 6);
  EXPECT_LT(own->rcm_sectors_per_nonzero, features.x_sectors_per_nonzero / 4);

  const CudaBroEllRules rules;
  const std::vector<Candidate> offered = rules.candidates(features, testing::h100());
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  std::vector<double> x(static_cast<std::size_t>(m.cols));
  for (double& v : x) v = value(rng);
  const std::vector<double> expected = csr_reference(m, x);
  for (std::size_t i = 0; i < kBroEllChoices.size(); ++i) {
    const BroEllChoice& choice = kBroEllChoices[i];
    if (choice.params.reorder != kBroReorderRcm) continue;
    SCOPED_TRACE("layout " + std::to_string(i));
    const Candidate c = bro_ell_candidate(choice);
    EXPECT_TRUE(bro_rcm_moves_fewer_bytes(features, *own, i));
    EXPECT_NE(std::find_if(offered.begin(), offered.end(),
                           [&](const Candidate& o) {
                             return o.params == c.params &&
                                    o.launch.threads_per_row == c.launch.threads_per_row;
                           }),
              offered.end());
    std::vector<std::int32_t> order;
    const auto layout = bro::make_bro_ell_layout<double>(
        bro_ell_stream_rows(m, choice, order), choice.params.slice_height,
        bro_words_per_symbol(choice.params.variant));
    EXPECT_EQ(order, rcm_order(m));
    // What the builder allocates: the layout, the order, the scratch x.
    EXPECT_EQ(rules.device_bytes(features, Precision::fp64, c),
              uploaded_bytes(layout, order.size()) + m.cols * sizeof(double) +
                  bro_rcm_gather_bytes(m.rows));
    // One word a row in RCM order (a first delta of at most 12 bits, six of at most 3 at
    // bandwidth 3), at least two in the caller's (seven deltas of up to 12 bits); cut into 4
    // sub-rows of at most 2 entries, a sub-row is a word in either order.
    CudaBroEllParams same = choice.params;
    same.reorder = kBroReorderNone;
    const std::size_t identity = bro_ell_choice_index("test", same, choice.threads_per_row);
    if (choice.threads_per_row == 1) {
      EXPECT_EQ(own->stream_words[i], m.rows);
      EXPECT_GE(own->stream_words[identity], 2 * m.rows);
    } else {
      EXPECT_EQ(own->stream_words[i], own->stream_words[identity]);
    }
    EXPECT_EQ(rules.gather_sectors_per_nonzero(features, c), own->rcm_sectors_per_nonzero);
    expect_close(expected, emulate_bro_ell(m, choice, x));
  }
}

// Issue 16: the RCM order a plan carries is used by the build instead of running RCM again.
// The stored order here is deliberately not RCM's (the reversed identity, a valid permutation),
// so a build that recomputed would give a different order; y is still the caller's.
TEST(CudaBroEllRcmPartition, AStoredOrderIsUsedInsteadOfComputingRcm) {
  const CsrMatrix<double> m = renumbered_band(600, testing::test_seed());
  const auto device = make_cpu_device();
  const BuildSource source(m, *device);
  std::vector<std::int32_t> reversed(static_cast<std::size_t>(m.rows));
  for (std::size_t i = 0; i < reversed.size(); ++i)
    reversed[i] = static_cast<std::int32_t>(reversed.size() - 1 - i);
  ASSERT_NE(reversed, rcm_order(m));
  const auto stored = std::make_shared<const PlanPartition>(PlanPartition{"rcm", reversed});
  source.offer_partition(stored);

  const std::shared_ptr<const PlanPartition> used = bro_ell_rcm_partition(source);
  EXPECT_EQ(used, stored);                          // the same object: nothing was computed
  const BroEllChoice& choice = kBroEllChoices[11];  // 256 rows a slice, hopper, RCM
  ASSERT_EQ(choice.params.reorder, kBroReorderRcm);
  std::vector<std::int32_t> order;
  const CsrMatrix<double> rows = bro_ell_stream_rows(m, choice, order, used->entries);
  EXPECT_EQ(order, reversed);
  EXPECT_EQ(rows.col_indices, permute_symmetric(m, reversed).col_indices);
  std::mt19937_64 rng(testing::test_seed());
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  std::vector<double> x(static_cast<std::size_t>(m.cols));
  for (double& v : x) v = value(rng);
  const std::vector<double> expected = csr_reference(m, x);
  const std::vector<double> got = emulate_bro_ell(m, choice, x, used->entries);
  for (std::size_t r = 0; r < got.size(); ++r)
    ASSERT_NEAR(got[r], expected[r], 1e-12 * (1 + std::abs(expected[r]))) << "row " << r;
}

// The thorough feature pass sizes RCM by computing its order: it hands that order out (the
// engine offers it to the matrix's build source), so the RCM builds after it compute none; a
// standard pass computes and hands out nothing.
TEST(CudaBroEllRcmPartition, TheThoroughFeaturePassHandsItsOrderToTheBuilds) {
  const CsrMatrix<double> m = renumbered_band(3000, testing::test_seed());
  std::vector<std::shared_ptr<const PlanPartition>> standard;
  (void)extract_features(m, format_registry(), FeatureEffort::standard, &standard);
  EXPECT_TRUE(standard.empty());

  std::vector<std::shared_ptr<const PlanPartition>> computed;
  const MatrixFeatures features =
      extract_features(m, format_registry(), FeatureEffort::thorough, &computed);
  ASSERT_EQ(cuda_bro_ell_features(features)->rcm_sized, 1);
  ASSERT_EQ(computed.size(), 1u);
  EXPECT_EQ(computed[0]->kind, kBroRcmPartitionKind);
  EXPECT_EQ(computed[0]->entries, rcm_order(m));

  const auto device = make_cpu_device();
  const BuildSource source(m, *device);
  source.offer_partition(computed[0]);
  EXPECT_EQ(bro_ell_rcm_partition(source), computed[0]);  // the same object: not computed again
}

// A build handed the order an earlier build computed builds exactly what that build did.
TEST(CudaBroEllRcmPartition, AStoredRcmOrderBuildsTheSameLayoutAsComputingIt) {
  const CsrMatrix<double> m = renumbered_band(600, testing::test_seed());
  const auto device = make_cpu_device();
  const BuildSource computing(m, *device);
  const std::shared_ptr<const PlanPartition> computed = bro_ell_rcm_partition(computing);
  EXPECT_EQ(computed->kind, "rcm");
  EXPECT_EQ(computed->entries, rcm_order(m));
  EXPECT_EQ(bro_ell_rcm_partition(computing), computed);  // held: the next candidate shares it

  const BuildSource loading(m, *device);
  loading.offer_partition(std::make_shared<const PlanPartition>(*computed));  // a stored copy
  const std::shared_ptr<const PlanPartition> loaded = bro_ell_rcm_partition(loading);
  for (const BroEllChoice& choice : kBroEllChoices) {
    if (choice.params.reorder != kBroReorderRcm) continue;
    std::vector<std::int32_t> computed_order, loaded_order;
    const auto a = bro::make_bro_ell_layout<double>(
        bro_ell_stream_rows(m, choice, computed_order, computed->entries),
        choice.params.slice_height, bro_words_per_symbol(choice.params.variant));
    const auto b = bro::make_bro_ell_layout<double>(
        bro_ell_stream_rows(m, choice, loaded_order, loaded->entries), choice.params.slice_height,
        bro_words_per_symbol(choice.params.variant));
    EXPECT_EQ(loaded_order, computed_order);
    EXPECT_EQ(b.stream, a.stream);
    EXPECT_EQ(b.bit_alloc, a.bit_alloc);
    EXPECT_EQ(b.values, a.values);
  }
}

// A stored order that is not a permutation of the rows (damaged, or of another matrix) is not
// used: RCM is computed again and the result is RCM's.
TEST(CudaBroEllRcmPartition, AnInvalidStoredOrderIsReplacedByRcm) {
  const CsrMatrix<double> m = renumbered_band(300, testing::test_seed());
  const auto device = make_cpu_device();
  std::vector<std::int32_t> repeated = rcm_order(m);
  repeated[5] = repeated[6];
  std::vector<std::int32_t> out_of_range = rcm_order(m);
  out_of_range[0] = static_cast<std::int32_t>(m.rows);
  std::vector<std::int32_t> short_order = rcm_order(m);
  short_order.pop_back();
  for (const std::vector<std::int32_t>& bad : {repeated, out_of_range, short_order}) {
    const BuildSource source(m, *device);
    const auto stored = std::make_shared<const PlanPartition>(PlanPartition{"rcm", bad});
    source.offer_partition(stored);
    const std::shared_ptr<const PlanPartition> used = bro_ell_rcm_partition(source);
    EXPECT_NE(used, stored);
    EXPECT_EQ(used->entries, rcm_order(m));
  }
  EXPECT_EQ(permutation_problem(PlanPartition{"rcm", repeated}, "rcm", m.rows),
            "entry 6 repeats row " + std::to_string(repeated[5]));  // its second place
  EXPECT_EQ(permutation_problem(PlanPartition{"rcm", short_order}, "rcm", m.rows),
            "it has 299 entries, the matrix has 300 rows");
  EXPECT_EQ(permutation_problem(PlanPartition{"bar", rcm_order(m)}, "rcm", m.rows),
            "its kind is 'bar', this build needs 'rcm'");
}

// The BAR order as a plan partition (issue 16), as RCM's above: computed once per matrix and
// height, shared by the candidates of that height, and a stored copy builds the same layout
// without running BAR. On the heavy tail (not square: BAR permutes rows only).
TEST(CudaBroEllBarPartition, AStoredBarOrderBuildsTheSameLayoutAsComputingIt) {
  const CsrMatrix<double>& m = sample_matrix().matrix;
  const auto device = make_cpu_device();
  const BuildSource computing(m, *device);
  const BuildSource loading(m, *device);
  std::size_t bar_layouts = 0;
  for (const BroEllChoice& choice : kBroEllChoices) {
    if (choice.params.reorder != kBroReorderBar) continue;
    ++bar_layouts;
    const std::uint32_t h = choice.params.slice_height;
    SCOPED_TRACE("h " + std::to_string(h) + " variant " + std::to_string(choice.params.variant));
    const std::shared_ptr<const PlanPartition> computed =
        bro_ell_order_partition(computing, choice);
    ASSERT_NE(computed, nullptr);
    EXPECT_EQ(computed->kind, "bar/h" + std::to_string(h));
    EXPECT_EQ(computed->entries, bro::bar_order(m, h));
    // Held: the other variant of this height (and the next build of this one) shares it.
    for (const BroEllChoice& sibling : kBroEllChoices) {
      if (sibling.params.reorder == kBroReorderBar && sibling.params.slice_height == h) {
        EXPECT_EQ(bro_ell_order_partition(computing, sibling), computed);
      }
    }

    const auto stored = std::make_shared<const PlanPartition>(*computed);  // a stored copy
    loading.offer_partition(stored);
    const std::shared_ptr<const PlanPartition> loaded = bro_ell_order_partition(loading, choice);
    EXPECT_EQ(loaded, stored);  // the same object: BAR did not run
    std::vector<std::int32_t> computed_order, loaded_order;
    const auto a = bro::make_bro_ell_layout<double>(bro_ell_stream_rows(m, choice, computed_order),
                                                    h, bro_words_per_symbol(choice.params.variant));
    const auto b = bro::make_bro_ell_layout<double>(
        bro_ell_stream_rows(m, choice, loaded_order, loaded->entries), h,
        bro_words_per_symbol(choice.params.variant));
    EXPECT_EQ(loaded_order, computed_order);
    EXPECT_EQ(b.col_offsets, a.col_offsets);
    EXPECT_EQ(b.word_offsets, a.word_offsets);
    EXPECT_EQ(b.stream, a.stream);
    EXPECT_EQ(b.bit_alloc, a.bit_alloc);
    EXPECT_EQ(b.values, a.values);
  }
  EXPECT_EQ(bar_layouts, 4u);
  // No reordering: no partition, nothing for the plan to carry.
  EXPECT_EQ(bro_ell_order_partition(computing, kBroEllChoices[0]), nullptr);
}

// A stored order that is not BAR's but a permutation of the rows (the reversed rows) is what
// the build runs: y is still the caller's, by the host multiply over the built arrays.
TEST(CudaBroEllBarPartition, AStoredOrderIsUsedInsteadOfComputingBar) {
  const CsrMatrix<double>& m = sample_matrix().matrix;
  const auto device = make_cpu_device();
  const BuildSource source(m, *device);
  std::vector<std::int32_t> reversed(static_cast<std::size_t>(m.rows));
  for (std::size_t i = 0; i < reversed.size(); ++i)
    reversed[i] = static_cast<std::int32_t>(reversed.size() - 1 - i);
  ASSERT_NE(reversed, bro::bar_order(m, 256));
  const auto stored = std::make_shared<const PlanPartition>(PlanPartition{"bar/h256", reversed});
  source.offer_partition(stored);
  const BroEllChoice& choice = kBroEllChoices[3];  // 256 rows a slice, hopper, BAR
  ASSERT_EQ(choice.params.reorder, kBroReorderBar);
  const std::shared_ptr<const PlanPartition> used = bro_ell_order_partition(source, choice);
  EXPECT_EQ(used, stored);
  std::vector<std::int32_t> order;
  const CsrMatrix<double> rows = bro_ell_stream_rows(m, choice, order, used->entries);
  EXPECT_EQ(order, reversed);
  EXPECT_EQ(rows.col_indices, bro::permute_rows(m, reversed).col_indices);
  std::mt19937_64 rng(testing::test_seed());
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  std::vector<double> x(static_cast<std::size_t>(m.cols));
  for (double& v : x) v = value(rng);
  expect_close(csr_reference(m, x), emulate_bro_ell(m, choice, x, used->entries));
}

// A stored order that is not a permutation of the rows, or of another kind (another height,
// RCM's, BRO-HYB's ELL part's), is not used: BAR runs again and the result is BAR's.
TEST(CudaBroEllBarPartition, AnInvalidOrOtherKindOfStoredOrderIsReplacedByBar) {
  const CsrMatrix<double>& m = sample_matrix().matrix;
  const auto device = make_cpu_device();
  const BroEllChoice& choice = kBroEllChoices[1];  // 256 rows a slice, paper, BAR
  ASSERT_EQ(choice.params.reorder, kBroReorderBar);
  const std::vector<std::int32_t> bar = bro::bar_order(m, 256);
  std::vector<std::int32_t> repeated = bar;
  repeated[5] = repeated[6];
  std::vector<std::int32_t> out_of_range = bar;
  out_of_range[0] = static_cast<std::int32_t>(m.rows);
  std::vector<std::int32_t> short_order = bar;
  short_order.pop_back();
  std::vector<std::int32_t> reversed(bar.size());
  for (std::size_t i = 0; i < reversed.size(); ++i)
    reversed[i] = static_cast<std::int32_t>(reversed.size() - 1 - i);
  const std::vector<PlanPartition> bad{{"bar/h256", repeated},    {"bar/h256", out_of_range},
                                       {"bar/h256", short_order}, {"bar/h32", reversed},
                                       {"rcm", reversed},         {"bar/h256/k4", reversed}};
  for (const PlanPartition& offered : bad) {
    SCOPED_TRACE(offered.kind + ", " + std::to_string(offered.entries.size()) + " entries");
    const BuildSource source(m, *device);
    const auto stored = std::make_shared<const PlanPartition>(offered);
    source.offer_partition(stored);
    const std::shared_ptr<const PlanPartition> used = bro_ell_order_partition(source, choice);
    EXPECT_NE(used, stored);
    EXPECT_EQ(used->kind, "bar/h256");
    EXPECT_EQ(used->entries, bar);
  }
  EXPECT_EQ(permutation_problem(PlanPartition{"bar/h32", reversed}, "bar/h256", m.rows),
            "its kind is 'bar/h32', this build needs 'bar/h256'");
}

// BRO-HYB's BAR clusters its ELL part's rows (the first K entries of every row), so its order is
// that part's, named by K too; a whole-row order of the same height is not used for it. At K =
// the longest row the part is the matrix and the kind is cuda_bro_ell's: one BAR run for both.
TEST(CudaBroHybBarPartition, TheOrderIsTheEllPartsAndItsKindNamesTheWidth) {
  const CsrMatrix<double>& m = sample_matrix().matrix;
  const auto device = make_cpu_device();
  std::int64_t longest = 0;
  for (std::int64_t r = 0; r < m.rows; ++r) longest = std::max(longest, m.row_length(r));
  // Not HYB's K of this matrix (0: the heavy tail's rows are mostly longer than its few
  // shortest) but a part with entries in most rows, so that BAR has something to cluster.
  constexpr std::int64_t width = 8;
  ASSERT_LT(width, longest);
  const BroEllChoice& choice = kBroEllChoices[6];  // 32 rows a slice, paper, BAR
  ASSERT_EQ(choice.params.reorder, kBroReorderBar);
  const CudaBroHybParams params{.ell_width = static_cast<std::uint32_t>(width),
                                .slice_height = choice.params.slice_height,
                                .variant = choice.params.variant,
                                .reorder = choice.params.reorder,
                                .interval_rounds = 8};
  const CsrMatrix<double> leading = bro::leading_entries(m, width);
  ASSERT_GT(leading.nnz(), m.rows);
  const std::vector<std::int32_t> part_bar = bro::bar_order(leading, 32);
  ASSERT_NE(part_bar, bro::bar_order(m, 32));  // a different input, a different order

  const BuildSource source(m, *device);
  const std::shared_ptr<const PlanPartition> whole = bro_ell_order_partition(source, choice);
  const std::shared_ptr<const PlanPartition> computed =
      bro_hyb_bar_partition(source, leading, params, choice, longest);
  ASSERT_NE(computed, nullptr);
  EXPECT_EQ(computed->kind, "bar/h32/k" + std::to_string(width));
  EXPECT_EQ(computed->entries, part_bar);
  EXPECT_EQ(bro_hyb_bar_partition(source, leading, params, choice, longest), computed);  // held
  EXPECT_EQ(bro_ell_order_partition(source, choice), whole);  // each kind its own

  // A stored copy builds the same ELL part, and the part plus the COO part is the reference.
  const BuildSource loading(m, *device);
  const auto stored = std::make_shared<const PlanPartition>(*computed);
  loading.offer_partition(stored);
  EXPECT_EQ(bro_hyb_bar_partition(loading, leading, params, choice, longest), stored);
  std::vector<std::int32_t> computed_order, loaded_order;
  const auto a =
      bro::make_bro_ell_layout<double>(bro_ell_stream_rows(leading, choice, computed_order), 32, 1);
  const auto b = bro::make_bro_ell_layout<double>(
      bro_ell_stream_rows(leading, choice, loaded_order, stored->entries), 32, 1);
  EXPECT_EQ(loaded_order, computed_order);
  EXPECT_EQ(b.stream, a.stream);
  EXPECT_EQ(b.bit_alloc, a.bit_alloc);
  EXPECT_EQ(b.values, a.values);
  std::mt19937_64 rng(testing::test_seed());
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  std::vector<double> x(static_cast<std::size_t>(m.cols));
  for (double& v : x) v = value(rng);
  std::vector<double> y = emulate_bro_ell(leading, choice, x, stored->entries);
  const std::vector<double> rest = bro::multiply_bro_coo(
      bro::make_bro_coo_layout<double>(bro::trailing_entries(m, width), 8), m.rows, x);
  for (std::size_t r = 0; r < y.size(); ++r) y[r] += rest[r];
  expect_close(csr_reference(m, x), y);

  // Offered only cuda_bro_ell's whole-row order of that height: BAR runs on the part.
  const BuildSource other(m, *device);
  other.offer_partition(std::make_shared<const PlanPartition>(*whole));
  EXPECT_EQ(bro_hyb_bar_partition(other, leading, params, choice, longest)->entries, part_bar);

  // At K = the longest row: cuda_bro_ell's kind and order, shared with its BAR candidate.
  CudaBroHybParams full = params;
  full.ell_width = static_cast<std::uint32_t>(longest);
  EXPECT_EQ(bro_hyb_bar_partition_kind(32, longest, longest), "bar/h32");
  EXPECT_EQ(bro_hyb_bar_partition(source, bro::leading_entries(m, longest), full, choice, longest),
            whole);
  // No BAR: no partition.
  EXPECT_EQ(bro_hyb_bar_partition(source, leading, params, kBroEllChoices[5], longest), nullptr);
}

// A band in its own order has nothing for RCM to fix: all its x sectors and stream words above
// one a row are fewer bytes than the gather costs, so the hook does not even size RCM; no RCM
// layout is offered, a stored one is invalid and its bytes say why. Forced (the tests' path),
// RCM is sized and moves more bytes than the band in its own order.
TEST(CudaBroEllRules, RcmIsNeitherSizedNorOfferedOnABandInItsOwnOrder) {
  const auto& all = testing::conformance_matrices(testing::test_seed());
  const auto band =
      std::find_if(all.begin(), all.end(), [](const auto& n) { return n.name == "band_7_1000"; });
  ASSERT_NE(band, all.end());
  const MatrixFeatures features = extract_features(band->matrix);
  const std::optional<BroEllFeatures> own = cuda_bro_ell_features(features);
  ASSERT_TRUE(own.has_value());
  EXPECT_EQ(own->rcm_sized, 0);
  EXPECT_EQ(own->bandwidth, 3);
  const CudaBroEllRules rules;
  const std::vector<Candidate> offered = rules.candidates(features, testing::h100());
  ASSERT_FALSE(offered.empty());
  for (const Candidate& c : offered)
    EXPECT_NE(CudaBroEllRules::params_of(c).reorder, kBroReorderRcm);
  Candidate stored = offered.front();
  CudaBroEllParams p = CudaBroEllRules::params_of(stored);
  p.reorder = kBroReorderRcm;
  stored.params = FieldSet::of(p);
  const std::size_t index = bro_ell_choice_index("test", p, stored.launch.threads_per_row);
  EXPECT_FALSE(rules.is_valid(stored, features, testing::h100()));
  EXPECT_EQ(message_of([&] { rules.device_bytes(features, Precision::fp64, stored); }),
            "cuda_bro_ell: reorder 2 (RCM) was not sized for this matrix (its features found that "
            "no order could pay for the gather: bro_rcm_may_pay)");
  const BroEllFeatures forced = compute_bro_ell_features(band->matrix, 3, true);
  EXPECT_EQ(forced.rcm_sized, 1);
  EXPECT_EQ(forced.rcm_bandwidth, 3);
  EXPECT_FALSE(bro_rcm_moves_fewer_bytes(features, forced, index));
}

// On a random pattern every breadth-first order is wide (neighbourhoods do not overlap:
// cuda_ehyb's growth near 1), so the hook does not pay for an RCM order, however scattered
// the pattern's gathers are.
TEST(CudaBroEllRules, RcmIsNotSizedOnARandomPattern) {
  const auto& all = testing::conformance_matrices(testing::test_seed());
  const auto random = std::find_if(
      all.begin(), all.end(), [](const auto& n) { return n.name == "many_short_rows_200000"; });
  ASSERT_NE(random, all.end());
  const MatrixFeatures features = extract_features(random->matrix);
  EXPECT_GT(compute_cuda_ehyb_features(random->matrix).neighbourhood_growth,
            kEhybMaxNeighbourhoodGrowth);
  EXPECT_EQ(cuda_bro_ell_features(features)->rcm_sized, 0);
  for (const Candidate& c : CudaBroEllRules{}.candidates(features, testing::h100()))
    EXPECT_NE(CudaBroEllRules::params_of(c).reorder, kBroReorderRcm);
}

// RCM on a matrix that is not square: not offered, a stored plan invalid, and its bytes and
// build say why; BRO-HYB has no RCM layout at all.
TEST(CudaBroEllRules, StoredRcmPlanOnANonSquareMatrixIsInvalidAndSaysWhy) {
  const CsrMatrix<double>& m = sample_matrix().matrix;  // 2000 x 3000
  const MatrixFeatures features = extract_features(m);
  const CudaBroEllRules rules;
  const Candidate c = rules.candidates(features, testing::h100()).front();
  Candidate stored = c;
  CudaBroEllParams p = CudaBroEllRules::params_of(c);
  p.reorder = kBroReorderRcm;
  stored.params = FieldSet::of(p);
  EXPECT_FALSE(rules.is_valid(stored, features, testing::h100()));
  EXPECT_EQ(message_of([&] { rules.device_bytes(features, Precision::fp64, stored); }),
            "cuda_bro_ell: reorder 2 (RCM) renumbers rows and columns alike and needs a square "
            "matrix; this one is 2000 x 3000");
  std::vector<std::int32_t> order;
  EXPECT_EQ(message_of([&] {
              bro_ell_stream_rows(
                  m, kBroEllChoices[bro_ell_choice_index("test", p, stored.launch.threads_per_row)],
                  order);
            }),
            "cuda_bro_ell: reorder 2 (RCM) renumbers rows and columns alike and needs a square "
            "matrix; this one is 2000 x 3000");
  const std::optional<BroEllFeatures> own = cuda_bro_ell_features(features);
  ASSERT_TRUE(own.has_value());
  EXPECT_EQ(own->rcm_bandwidth, 0);
  EXPECT_EQ(own->rcm_sectors_per_nonzero, 0.0);

  const CudaBroHybRules hyb;
  for (const Candidate& h : hyb.candidates(features, testing::h100()))
    EXPECT_NE(CudaBroHybRules::params_of(h).reorder, kBroReorderRcm);
  Candidate hyb_rcm = hyb.candidates(features, testing::h100()).front();
  CudaBroHybParams hp = CudaBroHybRules::params_of(hyb_rcm);
  hp.reorder = kBroReorderRcm;
  hyb_rcm.params = FieldSet::of(hp);
  EXPECT_FALSE(hyb.is_valid(hyb_rcm, features, testing::h100()));
  EXPECT_EQ(message_of([&] { hyb.device_bytes(features, Precision::fp64, hyb_rcm); }),
            "cuda_bro_hyb: reorder 2 (RCM) is not a BRO-HYB layout (its COO part keeps the "
            "caller's numbering; RCM is cuda_bro_ell's)");
}

// The GPU conformance test runs the candidates the rules offer, spread over at most
// kMaxCandidatesPerMatrix: on the renumbered band it must reach RCM layouts of both symbol
// sizes and both thread counts, so the gather and the scatter run on the device.
TEST(CudaBroEllRules, ConformanceHasASquareMatrixWhereRcmIsOffered) {
  const auto& all = testing::conformance_matrices(testing::test_seed());
  const auto band = std::find_if(all.begin(), all.end(),
                                 [](const auto& n) { return n.name == "band_7_2000_renumbered"; });
  ASSERT_NE(band, all.end());
  const std::vector<Candidate> offered =
      CudaBroEllRules{}.candidates(
          extract_features(band->matrix, format_registry(), FeatureEffort::thorough),
          testing::h100());
  std::size_t rcm = 0;
  for (const Candidate& c : offered)
    rcm += CudaBroEllRules::params_of(c).reorder == kBroReorderRcm ? 1 : 0;
  EXPECT_EQ(rcm, 6u);
  ASSERT_EQ(offered.size(), kBroEllChoices.size());  // spread() then takes 0, 2, ..., 12, 15
  ASSERT_GT(offered.size(), testing::kMaxCandidatesPerMatrix);
  std::set<std::pair<std::uint32_t, std::uint32_t>> variants_and_threads;
  for (std::size_t i = 0; i < testing::kMaxCandidatesPerMatrix; ++i) {
    const Candidate& c = offered[i * (offered.size() - 1) / (testing::kMaxCandidatesPerMatrix - 1)];
    const CudaBroEllParams p = CudaBroEllRules::params_of(c);
    if (p.reorder == kBroReorderRcm)
      variants_and_threads.insert({p.variant, c.launch.threads_per_row});
  }
  EXPECT_TRUE(variants_and_threads.contains({kBroVariantPaper, 1u}));
  EXPECT_TRUE(variants_and_threads.contains({kBroVariantHopper, 4u}));
}

TEST(BroFormats, AreRegisteredUnderTheirIds) {
  const FormatRegistry& registry = format_registry();
  ASSERT_NE(registry.find(kCudaBroEllFormatId), nullptr);
  EXPECT_EQ(registry.find(kCudaBroEllFormatId)->rules->name(), "cuda_bro_ell");
  ASSERT_NE(registry.find(kCudaBroCooFormatId), nullptr);
  EXPECT_EQ(registry.find(kCudaBroCooFormatId)->rules->name(), "cuda_bro_coo");
  ASSERT_NE(registry.find(kCudaBroHybFormatId), nullptr);
  EXPECT_EQ(registry.find(kCudaBroHybFormatId)->rules->name(), "cuda_bro_hyb");
}

}  // namespace
}  // namespace spmvd
