#include <gtest/gtest.h>

#include <algorithm>

#include <map>
#include <optional>
#include <vector>

#include "core/error.hpp"
#include "kernels/formats/cpu_coo/cpu_coo_rules.hpp"
#include "kernels/formats/cpu_csr/cpu_csr_rules.hpp"
#include "kernels/formats/cusparse_csr/cusparse_csr_rules.hpp"
#include "models/families/bytes/bytes_record.hpp"
#include "models/families/coo/coo_record.hpp"
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

// Fake timings: each candidate's median from a table, a fixed build cost, and runs that cost
// their median each, so the cost of a tuning is exact. A missing entry fails to build (after
// its build cost). Records what it measured and with how many runs.
class FakeTimer final : public CandidateTimer {
 public:
  // builds: a build time of its own for some candidates (build_ms for the others).
  explicit FakeTimer(std::vector<std::pair<Candidate, double>> table, double build_ms = 1.0,
                     std::vector<std::pair<Candidate, double>> builds = {})
      : table_(std::move(table)), build_ms_(build_ms), builds_(std::move(builds)) {}
  CandidateTiming measure(const Candidate& c, RunCounts runs) override {
    measured.push_back(c);
    runs_seen.push_back(runs);
    CandidateTiming t{.median_ms = std::nullopt, .failure = "", .build_ms = build_ms_,
                      .measure_ms = 0.0};
    for (const auto& [known, ms] : builds_)
      if (known == c) t.build_ms = ms;
    for (const auto& [known, ms] : table_) {
      if (known == c) {
        t.median_ms = ms;
        t.measure_ms = ms * (runs.warmup + runs.timed);
        return t;
      }
    }
    t.failure = "out of memory";
    return t;
  }
  void keep_last() override { kept = measured.back(); }
  std::vector<Candidate> measured;
  std::vector<RunCounts> runs_seen;
  std::optional<Candidate> kept;

 private:
  std::vector<std::pair<Candidate, double>> table_;
  double build_ms_;
  std::vector<std::pair<Candidate, double>> builds_;
};

// Four candidates and the baseline, predicted 1, 2, 3, 4 and 5 ms. With 1 warm-up + 3 timed
// runs and builds estimated (and faked) at 1 ms, measuring a candidate predicted p costs
// 1 + 4p ms; measurement_order is c1, baseline, c2, c3, c4 (all of format 2 but the baseline),
// costing 5, 21, 9, 13 and 17 ms: 5, 26, 35, 48 and 65 ms in all. Budget = 0.1 x N x 1 ms.
struct Scenario {
  std::vector<Candidate> all{candidate(1), candidate(2), candidate(3), candidate(4), baseline()};
  FakePredictor predictor{{{candidate(1), 1.0},
                           {candidate(2), 2.0},
                           {candidate(3), 3.0},
                           {candidate(4), 4.0},
                           {baseline(), 5.0}}};
  static constexpr std::int64_t kNnz = 1000;
  static TunerOptions options() {
    TunerOptions o;
    o.warmup_runs = 1;
    o.timed_runs = 3;
    o.build_ns_per_nonzero_estimate = 1000.0;  // 1000 nonzeros: 1 ms a build
    return o;
  }
  // Measured as predicted, except that c3 is measured fastest.
  std::vector<std::pair<Candidate, double>> times{{candidate(1), 1.0},
                                                  {candidate(2), 2.0},
                                                  {candidate(3), 0.5},
                                                  {candidate(4), 4.0},
                                                  {baseline(), 5.0}};
};

// The ranking's clock for these tests: frozen, so ranking costs nothing and what a budget admits
// is the scenario's arithmetic alone, however loaded the machine running them is.
double frozen_clock() { return 0.0; }

BudgetedSelection tune(const Scenario& s, FakeTimer& timer, std::uint64_t expected,
                       TunerOptions options = Scenario::options(),
                       const BuildCostEstimate* build_costs = nullptr) {
  return select_within_budget(s.all, &s.predictor, timer, options,
                              TuneHints{.expected_multiplies = expected, .features_ms = 0.0},
                              Scenario::kNnz, build_costs, frozen_clock);
}

double spent(const TuningCost& c) {
  return c.features_ms + c.ranking_ms + c.builds_ms + c.measurements_ms;
}

TEST(BudgetedTuning, ModelOnlyMeasuresTheTopPredictionOnceAndTheBaselineBesideIt) {
  const Scenario s;
  FakeTimer timer(s.times);
  const BudgetedSelection r = tune(s, timer, 100);  // budget 10 ms: one measurement fits
  EXPECT_EQ(r.record.mode, TuneMode::model_only);
  EXPECT_EQ(r.record.k, 1u);
  // The baseline is measured whatever the budget (5 + 1 + 2 x 5 = 16 ms over the 10 ms).
  EXPECT_EQ(timer.measured, (std::vector<Candidate>{candidate(1), baseline()}));
  for (const RunCounts& runs : timer.runs_seen) {
    EXPECT_EQ(runs.warmup, 1);
    EXPECT_EQ(runs.timed, 1);
  }
  EXPECT_EQ(r.best.candidate, candidate(1));
  EXPECT_EQ(timer.kept, candidate(1));  // the measured build is the one kept
  EXPECT_DOUBLE_EQ(r.record.budget_ms, 10.0);
}

TEST(BudgetedTuning, AModelWhoseTopIsSlowerThanTheBaselineLeavesTheBaseline) {
  // The models' favourite measures 8 ms, cuSPARSE CSR ALG1 5 ms: the user keeps ALG1.
  const Scenario s;
  std::vector<std::pair<Candidate, double>> times = s.times;
  times[0].second = 8.0;
  FakeTimer timer(times);
  const BudgetedSelection r = tune(s, timer, 100);
  EXPECT_EQ(r.record.mode, TuneMode::model_only);
  EXPECT_EQ(r.best.candidate, baseline());
  EXPECT_EQ(timer.kept, baseline());
}

TEST(BudgetedTuning, ABaselineRankedFirstIsNotModelOnlysOneCandidate) {
  // The models rank cuSPARSE CSR ALG1 first (0.5 ms), c1 next; c1 measures 1 ms, ALG1 5. The
  // baseline is measured as the guard, and c1 as model-only's one candidate, over a budget that
  // the feature pass has spent already.
  Scenario s;
  s.predictor = FakePredictor{{{baseline(), 0.5},
                               {candidate(1), 1.0},
                               {candidate(2), 2.0},
                               {candidate(3), 3.0},
                               {candidate(4), 4.0}}};
  FakeTimer timer(s.times);
  const BudgetedSelection r =
      select_within_budget(s.all, &s.predictor, timer, Scenario::options(),
                           TuneHints{.expected_multiplies = 100, .features_ms = 50.0},
                           Scenario::kNnz, nullptr, frozen_clock);
  EXPECT_EQ(r.record.mode, TuneMode::model_only);
  EXPECT_EQ(timer.measured, (std::vector<Candidate>{baseline(), candidate(1)}));
  EXPECT_EQ(r.best.candidate, candidate(1));
  EXPECT_EQ(timer.kept, candidate(1));
}

TEST(BudgetedTuning, VerifyTopKMeasuresWhatTheBudgetAllowsAndKeepsTheFastest) {
  const Scenario s;
  FakeTimer timer(s.times);
  const BudgetedSelection r = tune(s, timer, 500);  // budget 50 ms: 48 ms for four
  EXPECT_EQ(r.record.mode, TuneMode::verify_top_k);
  EXPECT_EQ(r.record.k, 4u);
  EXPECT_EQ(timer.measured,
            (std::vector<Candidate>{candidate(1), baseline(), candidate(2), candidate(3)}));
  EXPECT_EQ(r.best.candidate, candidate(3));  // ranked third of format 2, measured fastest
  EXPECT_DOUBLE_EQ(r.best.median_ms, 0.5);
  EXPECT_DOUBLE_EQ(r.predicted_ms, 3.0);
  EXPECT_EQ(timer.kept, candidate(3));
  EXPECT_LE(spent(r.record.cost), r.record.budget_ms);
}

TEST(BudgetedTuning, ExhaustiveWhenTheBudgetCoversEveryCandidate) {
  const Scenario s;
  FakeTimer timer(s.times);
  const BudgetedSelection r = tune(s, timer, 1000);  // budget 100 ms: 65 ms for all five
  EXPECT_EQ(r.record.mode, TuneMode::exhaustive);
  EXPECT_EQ(r.measured, 5u);
  EXPECT_EQ(r.best.candidate, candidate(3));
  EXPECT_LE(spent(r.record.cost), r.record.budget_ms);
}

TEST(BudgetedTuning, AForcedExhaustiveSearchIsTheUnbudgetedOracle) {
  const Scenario s;
  FakeTimer timer(s.times);
  TunerOptions options = Scenario::options();
  options.mode = TuneMode::exhaustive;
  const BudgetedSelection r = tune(s, timer, 1, options);  // a budget of 0.1 ms, ignored
  EXPECT_EQ(r.record.mode, TuneMode::exhaustive);
  EXPECT_EQ(r.measured, 5u);
  EXPECT_DOUBLE_EQ(r.record.budget_ms, 0.0);
  EXPECT_EQ(r.best.candidate, candidate(3));
}

TEST(BudgetedTuning, ForcedVerifyTopKStillKeepsToTheBudget) {
  const Scenario s;
  FakeTimer timer(s.times);
  TunerOptions options = Scenario::options();
  options.mode = TuneMode::verify_top_k;
  const BudgetedSelection r = tune(s, timer, 300, options);  // 30 ms: two fit
  EXPECT_EQ(r.record.mode, TuneMode::verify_top_k);
  EXPECT_EQ(r.record.k, 2u);
  EXPECT_EQ(timer.measured, (std::vector<Candidate>{candidate(1), baseline()}));
  EXPECT_LE(spent(r.record.cost), r.record.budget_ms);
}

TEST(BudgetedTuning, TheExpectedMultipliesHintWidensTheSearchAsDocumented) {
  // docs/TUNER.md: model-only below the cost of two measurements, verify-top-k with k from the
  // budget, exhaustive once every candidate fits; k never shrinks as the hint grows.
  const Scenario s;
  const std::vector<std::pair<std::uint64_t, std::pair<TuneMode, std::uint32_t>>> expected{
      {1, {TuneMode::model_only, 1}},     {100, {TuneMode::model_only, 1}},
      {300, {TuneMode::verify_top_k, 2}}, {400, {TuneMode::verify_top_k, 3}},
      {500, {TuneMode::verify_top_k, 4}}, {700, {TuneMode::exhaustive, 5}},
      {1'000'000, {TuneMode::exhaustive, 5}}};
  for (const auto& [multiplies, mode_and_k] : expected) {
    FakeTimer timer(s.times);
    const BudgetedSelection r = tune(s, timer, multiplies);
    EXPECT_EQ(r.record.mode, mode_and_k.first) << multiplies << " multiplies";
    EXPECT_EQ(r.record.k, mode_and_k.second) << multiplies << " multiplies";
    EXPECT_EQ(r.record.expected_multiplies, multiplies);
  }
}

TEST(BudgetedTuning, ARequestWithoutAHintUsesTheDefault) {
  const Scenario s;
  FakeTimer timer(s.times);
  const BudgetedSelection r = tune(s, timer, 0);
  EXPECT_EQ(r.record.expected_multiplies, TunerOptions{}.default_expected_multiplies);
  EXPECT_DOUBLE_EQ(r.record.budget_ms,
                   0.1 * static_cast<double>(TunerOptions{}.default_expected_multiplies));
}

TEST(BudgetedTuning, StopsEarlyWhenBuildsCostMoreThanEstimated) {
  // The estimate lets four measurements fit (48 of 50 ms), but builds really take 7 ms: after
  // c1 (7 + 4 = 11 ms) and the baseline (7 + 20 = 27 ms: 38 in all), c2's 7 + 8 ms would
  // overrun, so the search stops at two and stays within the budget.
  const Scenario s;
  FakeTimer timer(s.times, /*build_ms=*/7.0);
  const BudgetedSelection r = tune(s, timer, 500);
  EXPECT_EQ(r.record.k, 4u);
  EXPECT_EQ(r.measured, 2u);
  EXPECT_LE(spent(r.record.cost), r.record.budget_ms);
}

TEST(BudgetedTuning, AnOptimisticModelMakesTheNextEstimatePessimistic) {
  // Every candidate measures twice its prediction: after c1 (1 + 4 x 2 = 9 ms) and the
  // baseline (measured whatever the budget: 1 + 4 x 10 = 41 ms), c2 is estimated at
  // 1 + 4 x 2 x 2 = 17 ms, which would overrun 30 ms further; nothing more is measured.
  const Scenario s;
  std::vector<std::pair<Candidate, double>> doubled;
  for (const auto& [c, ms] : s.times) doubled.push_back({c, 2 * ms});
  FakeTimer timer(doubled);
  const BudgetedSelection r = tune(s, timer, 300);
  EXPECT_EQ(r.measured, 2u);
  EXPECT_EQ(timer.measured, (std::vector<Candidate>{candidate(1), baseline()}));
}

TEST(BudgetedTuning, CostAccountingAddsUp) {
  const Scenario s;
  FakeTimer timer(s.times);
  const BudgetedSelection r = select_within_budget(
      s.all, &s.predictor, timer, Scenario::options(),
      TuneHints{.expected_multiplies = 500, .features_ms = 0.25}, Scenario::kNnz, nullptr,
      frozen_clock);
  const TuningCost& c = r.record.cost;
  EXPECT_DOUBLE_EQ(c.features_ms, 0.25);
  EXPECT_DOUBLE_EQ(c.builds_ms, 4.0);  // four builds of 1 ms
  // Runs of c1, baseline, c2, c3: 4 x (1 + 5 + 2 + 0.5).
  EXPECT_DOUBLE_EQ(c.measurements_ms, 34.0);
  EXPECT_GE(c.ranking_ms, 0.0);
  EXPECT_DOUBLE_EQ(c.total_ms, c.features_ms + c.ranking_ms + c.builds_ms + c.measurements_ms);
  EXPECT_LE(c.total_ms, r.record.budget_ms);
}

TEST(BudgetedTuning, RecordsEveryMeasurementWithItsPredictionAsASample) {
  const Scenario s;
  FakeTimer timer(s.times);
  const BudgetedSelection r = tune(s, timer, 500);
  // What the timer measured, in its order, each with the prediction it was ranked by.
  ASSERT_EQ(r.measurements.size(), timer.measured.size());
  ASSERT_EQ(r.measurements.size(), r.measured);
  const std::vector<double> predicted{1.0, 5.0, 2.0, 3.0};  // c1, baseline, c2, c3
  ASSERT_EQ(r.measurements.size(), predicted.size());
  for (std::size_t i = 0; i < r.measurements.size(); ++i) {
    const MeasuredCandidate& m = r.measurements[i];
    EXPECT_EQ(m.candidate, timer.measured[i]);
    EXPECT_EQ(m.predicted_ms, predicted[i]);
    const auto time = std::find_if(s.times.begin(), s.times.end(),
                                   [&](const auto& t) { return t.first == m.candidate; });
    EXPECT_EQ(m.measured_ms, time->second);
  }
}

TEST(BudgetedTuning, TiesGoToTheBetterRankedCandidateWhateverTheInputOrder) {
  // c1 and c2 measure the same; c1 is predicted faster, so it wins, in either input order.
  const FakePredictor predictor({{candidate(1), 1.0}, {candidate(2), 2.0}});
  const std::vector<std::pair<Candidate, double>> times{{candidate(1), 0.7}, {candidate(2), 0.7}};
  TunerOptions options = Scenario::options();
  options.mode = TuneMode::exhaustive;
  for (const auto& all : {std::vector<Candidate>{candidate(1), candidate(2)},
                          std::vector<Candidate>{candidate(2), candidate(1)}}) {
    FakeTimer timer(times);
    const BudgetedSelection r =
        select_within_budget(all, &predictor, timer, options, TuneHints{}, Scenario::kNnz,
                             nullptr, frozen_clock);
    EXPECT_EQ(r.best.candidate, candidate(1));
  }
  // Equal predictions keep the registry's order (rank_candidates is stable): the first wins.
  const FakePredictor flat({{candidate(1), 1.0}, {candidate(2), 1.0}});
  FakeTimer timer(times);
  const std::vector<Candidate> all{candidate(2), candidate(1)};
  EXPECT_EQ(select_within_budget(all, &flat, timer, options, TuneHints{}, Scenario::kNnz, nullptr,
                                 frozen_clock)
                .best.candidate,
            candidate(2));
}

TEST(BudgetedTuning, GoesDownTheOrderWhenTheChosenCannotBeBuilt) {
  const Scenario s;
  FakeTimer timer({{candidate(3), 0.5}});  // the others run out of memory
  const BudgetedSelection r = tune(s, timer, 100);
  EXPECT_EQ(timer.measured,
            (std::vector<Candidate>{candidate(1), baseline(), candidate(2), candidate(3)}));
  EXPECT_EQ(r.best.candidate, candidate(3));
  EXPECT_DOUBLE_EQ(r.predicted_ms, 3.0);
}

TEST(BudgetedTuning, WithoutPredictionsTheFirstMeasurementSetsTheBudget) {
  // Unranked: c1 is measured once (model-only's runs: 1 + 2 x 1 = 3 ms) and its 1 ms is the
  // reference: a budget of 0.1 x 500 x 1 = 50 ms, in which c2 and c3, estimated at 1 + 4 x 1 ms
  // each, fit; c3 measures fastest.
  const Scenario s;
  FakeTimer timer(s.times);
  const std::vector<Candidate> all{candidate(1), candidate(2), candidate(3)};
  const BudgetedSelection r = select_within_budget(
      all, nullptr, timer, Scenario::options(), TuneHints{.expected_multiplies = 500},
      Scenario::kNnz, nullptr, frozen_clock);
  EXPECT_EQ(timer.runs_seen[0].timed, 1);
  EXPECT_DOUBLE_EQ(r.record.budget_ms, 50.0);
  EXPECT_EQ(r.best.candidate, candidate(3));
  EXPECT_LE(spent(r.record.cost), r.record.budget_ms);
}

TEST(BudgetedTuning, MeasuresNoMoreThanMaxCandidatesMeasured) {
  const Scenario s;
  FakeTimer timer(s.times);
  TunerOptions options = Scenario::options();
  options.mode = TuneMode::exhaustive;
  options.max_candidates_measured = 2;
  const BudgetedSelection r = tune(s, timer, 0, options);
  EXPECT_EQ(timer.measured, (std::vector<Candidate>{candidate(1), baseline()}));
  EXPECT_EQ(r.record.k, 2u);
  EXPECT_EQ(r.best.candidate, candidate(1));
}

TEST(BudgetedTuning, NoMeasurableCandidateIsAFailedPreconditionNamingTheLastFailure) {
  const Scenario s;
  FakeTimer timer({});  // everything runs out of memory
  try {
    tune(s, timer, 1000);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::failed_precondition);
    EXPECT_STREQ(e.what(),
                 "no candidate could be measured (5 admissible; last failure: out of memory)");
  }
  EXPECT_EQ(timer.measured.size(), 5u);  // every one was tried, past the budget
}

TEST(MeasurementOrder, TopPredictionThenBaselineThenEachFormatsBestThenTheRest) {
  const Candidate other{.format = FormatId{7}, .params = {}, .launch = {.block_size = 9}};
  const std::vector<RankedCandidate> ranked{{candidate(1), 1.0}, {candidate(2), 2.0},
                                            {other, 3.0},        {candidate(3), 4.0},
                                            {baseline(), 5.0}};
  const auto order = measurement_order(ranked);
  std::vector<Candidate> got;
  for (const auto& r : order) got.push_back(r.candidate);
  EXPECT_EQ(got, (std::vector<Candidate>{candidate(1), baseline(), other, candidate(2),
                                         candidate(3)}));
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

// A build cost per candidate from a table (0 where absent).
class FakeBuildCosts final : public BuildCostEstimate {
 public:
  explicit FakeBuildCosts(std::vector<std::pair<Candidate, double>> table)
      : table_(std::move(table)) {}
  double build_ms(const Candidate& c) const override {
    for (const auto& [known, ms] : table_)
      if (known == c) return ms;
    return 0.0;
  }

 private:
  std::vector<std::pair<Candidate, double>> table_;
};

TEST(RankCandidates, ChargesEachCandidateItsBuildOverTheExpectedMultiplies) {
  // Candidate 2 is predicted 10 % faster than 3 but costs 500 ms to build (a host algorithm),
  // 3 costs 5 ms: over 1000 multiplies 2 costs 1.0 + 0.5 a multiply, 3 costs 1.1 + 0.005, so 3
  // comes first; over a million, 2's gain (0.1 ms each) pays for its build and it leads.
  const std::vector<Candidate> all{candidate(2), candidate(3)};
  const FakePredictor predictor({{candidate(2), 1.0}, {candidate(3), 1.1}});
  const FakeBuildCosts costs({{candidate(2), 500.0}, {candidate(3), 5.0}});
  EXPECT_EQ(rank_candidates(all, predictor, &costs, 1000)[0].candidate, candidate(3));
  EXPECT_EQ(rank_candidates(all, predictor, &costs, 1000000)[0].candidate, candidate(2));
  // The prediction itself is kept (the budget estimates runs from it).
  EXPECT_EQ(rank_candidates(all, predictor, &costs, 1000)[1].predicted_ms, 1.0);
  EXPECT_EQ(rank_candidates(all, predictor)[0].candidate, candidate(2));
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
  set.records.update<BytesRecord>([&](BytesRecord& r) {
    r.shared =
        BytesCalibration{.time_vs_bytes = {.intercept = 0.001, .slope = 1e-6, .quality = {}}};
  });
  set.records.put(
      CooRecord{.variants = {{.kernel = {},
                              .time_vs_nnz = {.intercept = 5.0, .slope = 1e-3, .quality = {}}}}});
  return set;
}

TEST(TuneMatrix, ModelOnlyKeepsTheTopPredictionsBuildAndRecordsItsCost) {
  const auto device = make_cpu_device();
  const CsrMatrix<double> m = tridiagonal(2000);
  const MatrixFeatures f = extract_features(m);
  const ModelPredictor predictor(cpu_models(device->info(), Precision::fp64));
  TunerOptions options;
  options.warmup_runs = 1;
  options.timed_runs = 3;
  options.memory_budget_bytes = 1 << 30;
  options.mode = TuneMode::model_only;
  const TunedPlan tuned = tune_matrix(format_registry(), *device, m, f, Precision::fp64, options,
                                      &predictor, TuneHints{.expected_multiplies = 10,
                                                            .features_ms = 0.5});
  const Plan& plan = tuned.plan;
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
  EXPECT_EQ(plan.tuning.mode, TuneMode::model_only);
  EXPECT_EQ(plan.tuning.expected_multiplies, 10u);
  EXPECT_DOUBLE_EQ(plan.tuning.cost.features_ms, 0.5);
  EXPECT_GT(plan.tuning.cost.builds_ms, 0.0);
  EXPECT_GT(plan.tuning.cost.measurements_ms, 0.0);
  EXPECT_DOUBLE_EQ(plan.tuning.cost.total_ms,
                   plan.tuning.cost.features_ms + plan.tuning.cost.ranking_ms +
                       plan.tuning.cost.builds_ms + plan.tuning.cost.measurements_ms);
  EXPECT_DOUBLE_EQ(plan.tuning_spmv_equivalents(), plan.tuning.cost.total_ms / plan.measured_ms);
  // The measured build is handed over: it multiplies correctly without a rebuild.
  ASSERT_NE(tuned.op, nullptr);
  const std::vector<double> x(2000, 1.0);
  std::vector<double> y(2000, 7.0);
  tuned.op->apply(x.data(), y.data(), 1.0, 0.0);
  EXPECT_DOUBLE_EQ(y[0], 1.0);
  EXPECT_DOUBLE_EQ(y[1], 0.0);
  EXPECT_DOUBLE_EQ(y[1999], 1.0);
}

TEST(TuneMatrix, AForcedExhaustiveSearchWithoutModelsMeasuresEveryCandidate) {
  const auto device = make_cpu_device();
  const CsrMatrix<double> m = tridiagonal(500);
  TunerOptions options;
  options.warmup_runs = 0;
  options.timed_runs = 1;
  options.memory_budget_bytes = 1 << 30;
  options.mode = TuneMode::exhaustive;
  const Plan plan =
      tune_matrix(format_registry(), *device, m, extract_features(m), Precision::fp64, options)
          .plan;
  const auto admissible = enumerate_candidates(format_registry(), extract_features(m),
                                               device->info(), Precision::fp64, 1 << 30);
  EXPECT_EQ(plan.candidates_measured, admissible.size());
  EXPECT_EQ(plan.predicted_ms, 0.0);
}

// The serving build (ServingBuild) is measured where it stands: run, not built again, and when
// it wins the tuning hands back no build (the engine keeps serving the one it has).
class CountingOperator final : public SpmvOperator {
 public:
  void apply(const void*, void*, double, double) override { ++applies; }
  Precision precision() const noexcept override { return Precision::fp64; }
  std::size_t device_bytes() const noexcept override { return 0; }
  int applies = 0;
};

TEST(TuneMatrix, MeasuresTheServingBuildInPlaceAndHandsNoBuildBackWhenItWins) {
  const auto device = make_cpu_device();
  const CsrMatrix<double> m = tridiagonal(20000);
  TunerOptions options;
  options.warmup_runs = 1;
  options.timed_runs = 3;
  options.memory_budget_bytes = 1 << 30;
  options.mode = TuneMode::exhaustive;
  const MatrixFeatures f = extract_features(m);
  const auto admissible =
      enumerate_candidates(format_registry(), f, device->info(), Precision::fp64, 1 << 30);
  ASSERT_GE(admissible.size(), 2u);
  CountingOperator serving_op;  // does nothing: faster than any real multiply
  const ServingBuild serving{admissible.back(), &serving_op};
  const TunedPlan tuned = tune_matrix(format_registry(), *device, m, f, Precision::fp64, options,
                                      nullptr, {}, nullptr, nullptr, &serving);
  EXPECT_EQ(serving_op.applies, options.warmup_runs + options.timed_runs);
  EXPECT_EQ(tuned.plan.format, serving.candidate.format);
  EXPECT_EQ(tuned.plan.params, serving.candidate.params);
  EXPECT_EQ(tuned.plan.launch, serving.candidate.launch);
  EXPECT_EQ(tuned.op, nullptr);
  EXPECT_EQ(tuned.plan.candidates_measured, admissible.size());
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

namespace spmvd {
namespace {

TEST(BudgetedTuning, PassesOverACandidateWhoseBuildOverrunsTheBudgetForCheaperOnesBehindIt) {
  // Budget 50 ms (500 multiplies of the 1 ms favourite). c2 must be built on the host (100 ms
  // estimated): it cannot fit, but c3 (1 ms, a device conversion) behind it can, and is the
  // fastest. Estimates c1 5, baseline 20 (no build: it serves), c2 108, c3 13 ms: k = 3.
  const Scenario s;
  FakeTimer timer(s.times);
  const FakeBuildCosts costs({{candidate(1), 1.0},
                              {candidate(2), 100.0},
                              {candidate(3), 1.0},
                              {candidate(4), 1.0}});
  const BudgetedSelection r = tune(s, timer, 500, Scenario::options(), &costs);
  EXPECT_EQ(r.record.mode, TuneMode::verify_top_k);
  EXPECT_EQ(r.record.k, 3u);
  EXPECT_EQ(timer.measured, (std::vector<Candidate>{candidate(1), baseline(), candidate(3)}));
  EXPECT_EQ(r.best.candidate, candidate(3));
  EXPECT_LE(spent(r.record.cost), r.record.budget_ms);
}

}  // namespace
}  // namespace spmvd

namespace spmvd {
namespace {

TEST(BudgetedTuning, VerifyTopKPassesOverATopWhoseBuildOverrunsTheBudget) {
  // Budget 50 ms (500 multiplies of the 1 ms favourite). c1, the top, must be built on the host
  // (100 ms estimated, twice the budget): verify-top-k (k = 3: baseline 21, c2 9, c3 13 ms fit)
  // passes over it, measures the baseline, then what fits behind it, and keeps c3, the fastest
  // measured, within the budget. model-only would still measure its top: its floor.
  const Scenario s;
  FakeTimer timer(s.times);
  const FakeBuildCosts costs({{candidate(1), 100.0},
                              {candidate(2), 1.0},
                              {candidate(3), 1.0},
                              {candidate(4), 1.0}});
  const BudgetedSelection r = tune(s, timer, 500, Scenario::options(), &costs);
  EXPECT_EQ(r.record.mode, TuneMode::verify_top_k);
  EXPECT_EQ(r.record.k, 3u);
  ASSERT_FALSE(timer.measured.empty());
  EXPECT_EQ(timer.measured.front(), baseline());
  EXPECT_EQ(std::count(timer.measured.begin(), timer.measured.end(), candidate(1)), 0);
  EXPECT_EQ(r.best.candidate, candidate(3));
  EXPECT_LE(spent(r.record.cost), r.record.budget_ms);
}

TEST(BudgetedTuning, ABuildSlowerThanEstimatedMakesOnlyItsOwnFormatsNextEstimatesPessimistic) {
  // d1 and d2 are device conversions (format 2, estimated 0.1 ms), h1 and h2 host builds
  // (format 7, estimated 10 ms); budget 100 ms (1000 multiplies of the 1-ms favourite); 1 + 3
  // runs. Order: d1, the baseline, h1 (format 7's best), h2, d2; choose_tuning fits the first
  // four (68.1 ms), d2 (0.1 + 48) not: k = 4. d1's build takes 2 ms, 20x its estimate (a
  // first build's kernel loading); h1 is then still estimated at 10 + 8 ms, and measured
  // (26 ms spent, its build takes 30); h2 at 10 x 3 + 16 ms would overrun (58 + 46) and d2 at
  // 0.1 x 20 + 48 too: h1, the fastest, is kept. (One ratio for all formats put h1 at
  // 10 x 20 + 8 ms and kept d1.)
  const auto device = [](std::uint32_t b) { return candidate(b); };
  const auto host = [](std::uint32_t b) {
    return Candidate{.format = FormatId{7}, .params = {}, .launch = {.block_size = b}};
  };
  const std::vector<Candidate> all{device(1), host(1), host(2), baseline(), device(2)};
  const FakePredictor predictor{{{device(1), 1.0},
                                 {host(1), 2.0},
                                 {host(2), 4.0},
                                 {baseline(), 5.0},
                                 {device(2), 12.0}}};
  const FakeBuildCosts costs(
      {{device(1), 0.1}, {device(2), 0.1}, {host(1), 10.0}, {host(2), 10.0}});
  FakeTimer timer({{device(1), 1.0},
                   {host(1), 0.5},
                   {host(2), 4.0},
                   {baseline(), 5.0},
                   {device(2), 12.0}},
                  /*build_ms=*/0.0, {{device(1), 2.0}, {host(1), 30.0}});
  const BudgetedSelection r = select_within_budget(
      all, &predictor, timer, Scenario::options(),
      TuneHints{.expected_multiplies = 1000, .features_ms = 0.0}, Scenario::kNnz, &costs,
      frozen_clock);
  EXPECT_EQ(r.record.mode, TuneMode::verify_top_k);
  EXPECT_EQ(r.record.k, 4u);
  EXPECT_EQ(timer.measured, (std::vector<Candidate>{device(1), baseline(), host(1)}));
  EXPECT_EQ(r.best.candidate, host(1));
  EXPECT_LE(spent(r.record.cost), r.record.budget_ms);
}

TEST(BudgetedTuning, CountsTheEnumerationAsRankingAndTheTimersSetUpAsMeasurement) {
  // What tune_matrix spent before the selection (composed formats choosing partitions against
  // the models; the timer's vectors) is part of the cost and of the budget already spent.
  const Scenario s;
  FakeTimer timer(s.times);
  const TuneHints hints{.expected_multiplies = 100, .features_ms = 0.0, .enumeration_ms = 4.0,
                        .timer_setup_ms = 3.0};
  const BudgetedSelection r =
      select_within_budget(s.all, &s.predictor, timer, Scenario::options(), hints, Scenario::kNnz,
                           nullptr, frozen_clock);
  EXPECT_DOUBLE_EQ(r.record.cost.ranking_ms, 4.0);  // the enumeration; the frozen clock adds 0
  // model-only: c1 (1 ms build + 2 runs of 1 ms) and the baseline (1 + 2 x 5 ms) after the 3 ms.
  EXPECT_DOUBLE_EQ(r.record.cost.measurements_ms, 3.0 + 2.0 + 10.0);
  EXPECT_DOUBLE_EQ(r.record.cost.total_ms, r.record.cost.features_ms + r.record.cost.ranking_ms +
                                               r.record.cost.builds_ms +
                                               r.record.cost.measurements_ms);
}

}  // namespace
}  // namespace spmvd
