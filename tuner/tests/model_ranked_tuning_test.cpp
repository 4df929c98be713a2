#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <vector>

#include "core/error.hpp"
#include "kernels/formats/cpu_coo/cpu_coo_rules.hpp"
#include "kernels/formats/cpu_csr/cpu_csr_rules.hpp"
#include "kernels/formats/cusparse_csr/cusparse_csr_rules.hpp"
#include "tuner/feature_extraction.hpp"
#include "tuner/tuner.hpp"

namespace spmvd {
namespace {

// Candidates are told apart by block size; the baseline is cuSPARSE CSR ALG1 (block 0).
Candidate candidate(std::uint32_t block_size) {
  return Candidate{.format = FormatId{2}, .params = {}, .launch = {.block_size = block_size}};
}
Candidate baseline() {
  return Candidate{
      .format = kCusparseCsrFormatId,
      .params = FieldSet::of(CusparseCsrParams{.library_algorithm = kCusparseSpmvCsrAlg1}),
      .launch = {}};
}
Candidate cusparse_alg2() {
  return Candidate{
      .format = kCusparseCsrFormatId,
      .params = FieldSet::of(CusparseCsrParams{.library_algorithm = kCusparseSpmvCsrAlg2}),
      .launch = {}};
}

// Predictions from a table keyed by candidate; a missing entry has no prediction.
class FakePredictor final : public CandidatePredictor {
 public:
  explicit FakePredictor(std::vector<std::pair<Candidate, double>> table)
      : table_(std::move(table)) {}
  std::optional<Prediction> predict(const Candidate& c) const override {
    for (const auto& [known, ms] : table_)
      if (known == c) return Prediction{.ms = ms, .confidence = 0.5};
    return std::nullopt;
  }

 private:
  std::vector<std::pair<Candidate, double>> table_;
};

// Measured times from a table; a missing entry fails to build. Records what it measured.
class RecordingTimer final : public CandidateTimer {
 public:
  explicit RecordingTimer(std::vector<std::pair<Candidate, double>> table)
      : table_(std::move(table)) {}
  double median_ms(const Candidate& c) override {
    measured.push_back(c);
    for (const auto& [known, ms] : table_)
      if (known == c) return ms;
    throw Error(ErrorCode::resource_exhausted, "out of memory");
  }
  std::vector<Candidate> measured;

 private:
  std::vector<std::pair<Candidate, double>> table_;
};

TunerOptions top(std::size_t k) {
  TunerOptions options;
  options.measure_top_k = k;
  return options;
}

TEST(ModelRankedTuning, MeasuresOnlyTheTopKAndTheBaseline) {
  const std::vector<Candidate> all{candidate(1), candidate(2), candidate(3),   baseline(),
                                   candidate(4), candidate(5), cusparse_alg2()};
  // Block 5 is predicted best, then 4, 3, ...; the baseline last but one.
  const FakePredictor predictor({{candidate(1), 6.0},
                                 {candidate(2), 5.0},
                                 {candidate(3), 4.0},
                                 {baseline(), 9.0},
                                 {candidate(4), 3.0},
                                 {candidate(5), 2.0},
                                 {cusparse_alg2(), 10.0}});
  RecordingTimer timer({{candidate(1), 1.0},
                        {candidate(2), 1.0},
                        {candidate(3), 1.0},
                        {baseline(), 1.5},
                        {candidate(4), 2.0},
                        {candidate(5), 3.0},
                        {cusparse_alg2(), 1.0}});
  const RankedSelection s = select_model_ranked(all, predictor, timer, top(2));
  EXPECT_EQ(timer.measured, (std::vector<Candidate>{candidate(5), candidate(4), baseline()}));
  EXPECT_EQ(s.measured, 3u);
  // The baseline measured fastest of those three: the plan is never slower than it.
  EXPECT_EQ(s.best.candidate, baseline());
  EXPECT_DOUBLE_EQ(s.best.median_ms, 1.5);
  EXPECT_DOUBLE_EQ(s.predicted_ms, 9.0);
}

TEST(ModelRankedTuning, MeasuresTheBestPredictedCandidateOfEveryFormat) {
  // Format 7's only candidate is predicted slowest of all, but it is the only one of its
  // format: it is measured, and it wins.
  const Candidate other_format{.format = FormatId{7}, .params = {}, .launch = {.block_size = 9}};
  const std::vector<Candidate> all{candidate(1), candidate(2), candidate(3), other_format};
  const FakePredictor predictor(
      {{candidate(1), 1.0}, {candidate(2), 2.0}, {candidate(3), 3.0}, {other_format, 50.0}});
  RecordingTimer timer(
      {{candidate(1), 5.0}, {candidate(2), 4.0}, {candidate(3), 3.0}, {other_format, 0.5}});
  const RankedSelection hedged = select_model_ranked(all, predictor, timer, top(1));
  EXPECT_EQ(timer.measured, (std::vector<Candidate>{candidate(1), other_format}));
  EXPECT_EQ(hedged.best.candidate, other_format);

  TunerOptions trusting = top(1);
  trusting.measure_best_of_each_format = false;
  RecordingTimer trusting_timer(
      {{candidate(1), 5.0}, {candidate(2), 4.0}, {candidate(3), 3.0}, {other_format, 0.5}});
  EXPECT_EQ(select_model_ranked(all, predictor, trusting_timer, trusting).best.candidate,
            candidate(1));
}

TEST(ModelRankedTuning, TheFastestMeasuredWinsEvenWhenNotTopRanked) {
  const std::vector<Candidate> all{candidate(1), candidate(2), candidate(3), baseline()};
  const FakePredictor predictor(
      {{candidate(1), 1.0}, {candidate(2), 2.0}, {candidate(3), 3.0}, {baseline(), 4.0}});
  RecordingTimer timer(
      {{candidate(1), 5.0}, {candidate(2), 0.7}, {candidate(3), 0.1}, {baseline(), 4.0}});
  const RankedSelection s = select_model_ranked(all, predictor, timer, top(2));
  EXPECT_EQ(s.best.candidate, candidate(2));  // ranked second, measured fastest
  EXPECT_DOUBLE_EQ(s.best.median_ms, 0.7);
  EXPECT_DOUBLE_EQ(s.predicted_ms, 2.0);
  EXPECT_EQ(s.measured, 3u);  // candidate(3) was not measured, though it would have won
}

TEST(ModelRankedTuning, MeasuresTheBaselineEvenWithoutAPrediction) {
  const std::vector<Candidate> all{baseline(), candidate(1), candidate(2)};
  const FakePredictor predictor({{candidate(1), 1.0}, {candidate(2), 2.0}});
  RecordingTimer timer({{candidate(1), 3.0}, {candidate(2), 1.0}, {baseline(), 2.0}});
  const RankedSelection s = select_model_ranked(all, predictor, timer, top(1));
  EXPECT_EQ(timer.measured, (std::vector<Candidate>{candidate(1), baseline()}));
  EXPECT_EQ(s.best.candidate, baseline());
  EXPECT_DOUBLE_EQ(s.predicted_ms, 0.0);  // the winner had no prediction
}

TEST(ModelRankedTuning, WithoutAnyPredictionMeasuresLikeTheUnrankedSearch) {
  const std::vector<Candidate> all{candidate(1), candidate(2), candidate(3)};
  const FakePredictor predictor({});
  RecordingTimer timer({{candidate(1), 3.0}, {candidate(2), 1.0}, {candidate(3), 2.0}});
  TunerOptions options = top(1);
  options.max_candidates_measured = 2;
  const RankedSelection s = select_model_ranked(all, predictor, timer, options);
  EXPECT_EQ(timer.measured, (std::vector<Candidate>{candidate(1), candidate(2)}));
  EXPECT_EQ(s.best.candidate, candidate(2));
}

TEST(ModelRankedTuning, GoesDownTheRankingWhenTheChosenCannotBeBuilt) {
  const std::vector<Candidate> all{candidate(1), candidate(2), candidate(3)};
  const FakePredictor predictor({{candidate(1), 1.0}, {candidate(2), 2.0}, {candidate(3), 3.0}});
  RecordingTimer timer({{candidate(3), 4.0}});  // 1 and 2 run out of memory
  const RankedSelection s = select_model_ranked(all, predictor, timer, top(1));
  EXPECT_EQ(timer.measured, (std::vector<Candidate>{candidate(1), candidate(2), candidate(3)}));
  EXPECT_EQ(s.best.candidate, candidate(3));
  EXPECT_DOUBLE_EQ(s.predicted_ms, 3.0);
}

TEST(RankCandidates, OrdersByPredictionKeepingTiesAndPutsUnpredictedLast) {
  const std::vector<Candidate> all{candidate(1), candidate(2), candidate(3), candidate(4)};
  const FakePredictor predictor({{candidate(2), 5.0}, {candidate(3), 1.0}, {candidate(4), 5.0}});
  const auto ranked = rank_candidates(all, predictor);
  ASSERT_EQ(ranked.size(), 4u);
  EXPECT_EQ(ranked[0].candidate, candidate(3));
  EXPECT_EQ(ranked[1].candidate, candidate(2));
  EXPECT_EQ(ranked[2].candidate, candidate(4));
  EXPECT_EQ(ranked[3].candidate, candidate(1));
  EXPECT_FALSE(ranked[3].predicted_ms.has_value());
}

// ---- tune_matrix with a real ModelPredictor on the CPU device ----

CsrMatrix<double> tridiagonal(std::int64_t n) {
  CsrMatrix<double> m;
  m.rows = m.cols = n;
  m.row_offsets.clear();
  m.row_offsets.push_back(0);
  for (std::int64_t r = 0; r < n; ++r) {
    for (std::int64_t c = std::max<std::int64_t>(r - 1, 0); c <= std::min(r + 1, n - 1); ++c) {
      m.col_indices.push_back(static_cast<ColIndex>(c));
      m.values.push_back(c == r ? 2.0 : -1.0);
    }
    m.row_offsets.push_back(m.nnz());
  }
  return m;
}

ModelSet cpu_models(const DeviceInfo& device, Precision precision) {
  ModelSet set;
  set.device_signature = device.signature();
  set.precision = precision;
  // 1 us + 1 ns per byte for CSR; COO predicted far slower, so CSR ranks first.
  set.bytes = BytesCalibration{.time_vs_bytes = {.intercept = 0.001, .slope = 1e-6, .quality = {}}};
  set.coo = {{.kernel = {}, .time_vs_nnz = {.intercept = 5.0, .slope = 1e-3, .quality = {}}}};
  return set;
}

TEST(TuneMatrix, WithModelsMeasuresTheTopKAndRecordsThePrediction) {
  const auto device = make_cpu_device();
  const CsrMatrix<double> m = tridiagonal(2000);
  const MatrixFeatures f = extract_features(m);
  const ModelPredictor predictor(cpu_models(device->info(), Precision::fp64));
  TunerOptions options;
  options.warmup_runs = 1;
  options.timed_runs = 3;
  options.memory_budget_bytes = 1 << 30;
  options.measure_top_k = 1;
  options.measure_best_of_each_format = false;
  const Plan plan =
      tune_matrix(format_registry(), *device, m, f, Precision::fp64, options, &predictor);
  EXPECT_EQ(plan.format, kCpuCsrFormatId);
  EXPECT_EQ(plan.candidates_measured, 1u);  // no baseline on the CPU
  EXPECT_EQ(plan.tuner_version, kTunerVersion);
  const ModelCandidatePredictor models(predictor, format_registry(), f, device->info(),
                                       Precision::fp64);
  const auto expected =
      models.predict(Candidate{.format = kCpuCsrFormatId, .params = {}, .launch = {}});
  ASSERT_TRUE(expected.has_value());
  EXPECT_DOUBLE_EQ(plan.predicted_ms, expected->ms);
  EXPECT_GT(plan.predicted_ms, 0.001);
  EXPECT_GT(plan.measured_ms, 0.0);
}

TEST(TuneMatrix, WithoutModelsMeasuresEveryCandidateAsBefore) {
  const auto device = make_cpu_device();
  const CsrMatrix<double> m = tridiagonal(500);
  TunerOptions options;
  options.warmup_runs = 0;
  options.timed_runs = 1;
  options.memory_budget_bytes = 1 << 30;
  const Plan plan =
      tune_matrix(format_registry(), *device, m, extract_features(m), Precision::fp64, options);
  const auto admissible = enumerate_candidates(format_registry(), extract_features(m),
                                               device->info(), Precision::fp64, 1 << 30);
  EXPECT_EQ(plan.candidates_measured, admissible.size());
  EXPECT_EQ(plan.predicted_ms, 0.0);
}

TEST(TuneMatrix, RefusesModelsOfAnotherPrecision) {
  const auto device = make_cpu_device();
  const CsrMatrix<double> m = tridiagonal(100);
  const ModelPredictor predictor(cpu_models(device->info(), Precision::fp32));
  TunerOptions options;
  options.memory_budget_bytes = 1 << 30;
  try {
    tune_matrix(format_registry(), *device, m, extract_features(m), Precision::fp64, options,
                &predictor);
    FAIL() << "expected Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    EXPECT_STREQ(e.what(), "tune_matrix: the model set is for fp32, the matrix is tuned for fp64");
  }
}

}  // namespace
}  // namespace spmvd
