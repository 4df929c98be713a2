// The pure pieces of spmv-bench: candidate thinning, timing statistics, the byte model, the
// correctness check and suite parsing.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <sstream>

#include "bench/bench_input.hpp"
#include "bench/byte_model.hpp"
#include "bench/result_check.hpp"
#include "bench/sweep.hpp"
#include "bench/timing_stats.hpp"
#include "core/error.hpp"
#include "kernels/device.hpp"
#include "kernels/format_registry.hpp"
#include "kernels/formats/cuda_sell/cuda_sell_rules.hpp"
#include "models/tests/test_device.hpp"
#include "tuner/feature_extraction.hpp"

namespace spmvd {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(SpacedPicks, KeepsFirstAndLastAndSpreadsTheRest) {
  EXPECT_THAT(spaced_picks(10, 3), ElementsAre(0, 5, 9));
  EXPECT_THAT(spaced_picks(4, 2), ElementsAre(0, 3));
  EXPECT_THAT(spaced_picks(5, 1), ElementsAre(0));
  EXPECT_THAT(spaced_picks(3, 0), ElementsAre(0, 1, 2));
  EXPECT_THAT(spaced_picks(3, 7), ElementsAre(0, 1, 2));
  EXPECT_TRUE(spaced_picks(0, 2).empty());
}

TEST(TimingStats, MedianMinAndNearestRankP90) {
  const auto odd = summarize_timings({5, 1, 3, 2, 4});
  EXPECT_EQ(odd.median_ms, 3);
  EXPECT_EQ(odd.min_ms, 1);
  EXPECT_EQ(odd.p90_ms, 5);
  std::vector<double> twenty;
  for (int i = 20; i >= 1; --i) twenty.push_back(i);
  const auto even = summarize_timings(twenty);
  EXPECT_EQ(even.median_ms, 10.5);
  EXPECT_EQ(even.p90_ms, 18);
  EXPECT_THROW(summarize_timings({}), Error);
}

TEST(CsrByteCount, CountsValuesIndicesOffsetsXAndY) {
  // 2 x 3, nnz 4: 4*(8+4) + 3*8 + 3*8 + 2*8 = 112 in fp64.
  EXPECT_EQ(csr_byte_count(2, 3, 4, Precision::fp64, false), 112u);
  EXPECT_EQ(csr_byte_count(2, 3, 4, Precision::fp64, true), 128u);
  EXPECT_EQ(csr_byte_count(2, 3, 4, Precision::fp32, false), 4u * 8 + 24 + 12 + 8);
}

CsrMatrix<double> two_by_three() {  // [[1, 0, 2], [0, 0, 0]]... plus a row with a tiny value
  return CsrMatrix<double>{3, 3, {0, 2, 2, 3}, {0, 2, 1}, {1.0, 2.0, 0.1}};
}

TEST(SpmvReference, IsTheExactProductWithXRoundedToThePrecision) {
  const auto m = two_by_three();
  const auto ref = make_spmv_reference(m, Precision::fp32, 5);
  ASSERT_EQ(ref.x.size(), 3u);
  for (const double v : ref.x) {
    EXPECT_EQ(v, static_cast<double>(static_cast<float>(v)));
    EXPECT_GE(v, -1.0);
    EXPECT_LT(v, 1.0);
  }
  EXPECT_EQ(ref.y[0], 1.0 * ref.x[0] + 2.0 * ref.x[2]);
  EXPECT_EQ(ref.y[1], 0.0);
  EXPECT_EQ(ref.y[2], static_cast<double>(0.1f) * ref.x[1]);  // values rounded to fp32 too
  EXPECT_EQ(ref.bound[1], 0.0);  // an empty row must come out exactly 0
}

TEST(CheckSpmvResult, AcceptsRoundingAndRejectsNanWrongValuesAndUnwrittenEmptyRows) {
  const auto m = two_by_three();
  const auto ref = make_spmv_reference(m, Precision::fp32, 5);
  std::vector<float> y(ref.y.begin(), ref.y.end());
  EXPECT_TRUE(check_spmv_result(y, ref).passed());

  auto nan_row = y;
  nan_row[1] = std::numeric_limits<float>::quiet_NaN();  // the poison left in an empty row
  const auto nan_outcome = check_spmv_result(nan_row, ref);
  EXPECT_FALSE(nan_outcome.passed());
  EXPECT_THAT(nan_outcome.message, HasSubstr("row 1: got nan, expected 0"));

  auto off = y;
  off[0] += 1e-3f;
  off[2] = -off[2] + 0.5f;
  const auto off_outcome = check_spmv_result(off, ref);
  EXPECT_EQ(off_outcome.wrong_rows, 2);
  EXPECT_THAT(off_outcome.message, HasSubstr("row 0: got"));
  EXPECT_THAT(off_outcome.message, HasSubstr("2 rows wrong in all"));
}

TEST(ParseSuite, ReadsSourcesLabelsDerivedCopiesAndComments) {
  std::istringstream text(
      "# the suite\n"
      "\n"
      "cage11.mtx.gz\n"
      "stencil2d:n=20,points=5 label=grid   # trailing comment\n"
      "sub/ego-Twitter_u.mtx.gz derived=8\n");
  const auto inputs = parse_suite(text, "suite.txt");
  ASSERT_EQ(inputs.size(), 3u);
  EXPECT_EQ(inputs[0].source, "cage11.mtx.gz");
  EXPECT_EQ(inputs[0].label, "cage11");
  EXPECT_FALSE(inputs[0].derived());
  EXPECT_EQ(inputs[1].label, "grid");
  EXPECT_EQ(inputs[2].label, "ego-Twitter_u-x8");
  EXPECT_EQ(inputs[2].copies, 8);
  EXPECT_TRUE(inputs[2].derived());
}

TEST(ParseSuite, RenumberedInputsAreDerivedAndSayItInTheirLabel) {
  std::istringstream text("cage11.mtx.gz derived=4 renumber=7\n");
  const auto inputs = parse_suite(text, "suite.txt");
  ASSERT_EQ(inputs.size(), 1u);
  EXPECT_EQ(inputs[0].renumber_seed, 7u);
  EXPECT_EQ(inputs[0].label, "cage11-x4-renumbered");
  EXPECT_TRUE(inputs[0].derived());
}

std::string suite_error(const std::string& text) {
  std::istringstream in(text);
  try {
    parse_suite(in, "suite.txt");
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    return e.what();
  }
  return "no error";
}

TEST(ParseSuite, ErrorsNameTheLineAndToken) {
  EXPECT_EQ(suite_error("a.mtx\nb.mtx fast\n"),
            "suite.txt:2: unknown token 'fast' (expected label=NAME, derived=COPIES or "
            "renumber=SEED)");
  EXPECT_EQ(suite_error("a.mtx renumber=0\n"), "suite.txt:1: renumber needs a seed >= 1, got '0'");
  EXPECT_EQ(suite_error("a.mtx derived=1\n"), "suite.txt:1: derived needs a copy count >= 2, got '1'");
  EXPECT_EQ(suite_error("a.mtx\nsub/a.mtx.gz\n"), "suite.txt:2: label 'a' used twice");
}

TEST(LoadBenchInput, ReplicatesADerivedInput) {
  const BenchInput input{.source = "banded:rows=10,bandwidth=1", .label = "b", .copies = 3};
  const auto m = load_bench_input(input, "");
  EXPECT_EQ(m.rows, 30);
  EXPECT_EQ(m.nnz(), 3 * 28);
}

// Candidates under short_ms get short_reps timed applies in all; the others keep reps.
TEST(SweepMatrix, TimesShortCandidatesShortRepsTimes) {
  const auto m =
      load_bench_input({.source = "banded:rows=64,bandwidth=2", .label = "b", .copies = 1}, "");
  const MatrixFeatures features = extract_features(m);
  const auto device = make_cpu_device();
  SweepOptions options;
  options.formats = {"cpu_csr"};
  options.reps = 20;
  options.warmup = 1;
  options.short_reps = 45;
  options.memory_budget_bytes = std::uint64_t{1} << 30;  // admissible() weighs the format against it
  const auto timed_reps = [&](double short_ms) {
    options.short_ms = short_ms;
    const SweepResult r = sweep_matrix(m, features, *device, CopyBandwidth{}, options, {});
    EXPECT_FALSE(r.candidates.empty());
    for (const CandidateResult& c : r.candidates) EXPECT_TRUE(c.correct()) << c.message;
    return r.candidates.empty() ? 0 : r.candidates.front().timed_reps;
  };
  EXPECT_EQ(timed_reps(1e9), 45);  // every candidate counts as short
  EXPECT_EQ(timed_reps(0.0), 20);  // none does
}

TEST(CandidatesWithinMemoryBudget, KeepsThoseThatFitInOrderAndNamesTheOthers) {
  // cuda_sell's candidates on a power-law graph store different padding (slice heights, sort
  // windows): with the budget at the median of their device bytes, those above it are refused.
  const auto m = load_bench_input(
      {.source = "powerlaw:scale=12,edge_factor=8,seed=3", .label = "p", .copies = 1}, "");
  const MatrixFeatures features = extract_features(m);
  const FormatRules& rules = *format_registry().find(kCudaSellFormatId)->rules;
  const std::vector<Candidate> all = rules.candidates(features, testing_support::h100_like());
  std::vector<std::uint64_t> bytes;
  for (const Candidate& c : all) bytes.push_back(rules.device_bytes(features, Precision::fp64, c));
  std::vector<std::uint64_t> sorted = bytes;
  std::sort(sorted.begin(), sorted.end());
  ASSERT_LT(sorted.front(), sorted.back()) << "the test needs candidates of different sizes";
  const std::uint64_t budget = sorted[sorted.size() / 2];
  std::vector<std::string> refused;
  const std::vector<Candidate> kept =
      candidates_within_memory_budget(rules, features, Precision::fp64, all, budget, refused);
  std::vector<Candidate> expected;
  for (std::size_t i = 0; i < all.size(); ++i)
    if (bytes[i] <= budget) expected.push_back(all[i]);
  EXPECT_EQ(kept, expected);
  ASSERT_EQ(refused.size(), all.size() - expected.size());
  ASSERT_FALSE(refused.empty());
  EXPECT_THAT(refused.front(), HasSubstr("fp64 cuda_sell "));
  EXPECT_THAT(refused.front(),
              HasSubstr("device bytes over the memory budget of " + std::to_string(budget)));
  // No budget: every candidate.
  refused.clear();
  EXPECT_EQ(candidates_within_memory_budget(rules, features, Precision::fp64, all, 0, refused),
            all);
  EXPECT_TRUE(refused.empty());
}

}  // namespace
}  // namespace spmvd
