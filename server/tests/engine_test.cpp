#include "server/engine.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <random>
#include <thread>

#include "bench/generators.hpp"
#include "core/error.hpp"
#include "db/sqlite_plan_store.hpp"
#include "kernels/formats/cpu_csr/cpu_csr_rules.hpp"
#include "kernels/formats/cuda_bro_ell/cuda_bro_ell_rules.hpp"
#include "models/device_calibration.hpp"
#include "models/families/bytes/bytes_record.hpp"
#include "tuner/feature_extraction.hpp"

namespace spmvd {
namespace {

// A seeded random matrix with an empty row and one long row.
CsrMatrix<double> random_matrix(std::int64_t rows, std::int64_t cols, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  CsrMatrix<double> m;
  m.rows = rows;
  m.cols = cols;
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::int64_t length = r == 1 ? 0 : (r == 2 ? cols : 1 + static_cast<std::int64_t>(rng() % 5));
    std::vector<ColIndex> row;
    for (std::int64_t k = 0; k < length; ++k) row.push_back(static_cast<ColIndex>(r == 2 ? k : rng() % cols));
    std::sort(row.begin(), row.end());
    row.erase(std::unique(row.begin(), row.end()), row.end());
    for (ColIndex c : row) {
      m.col_indices.push_back(c);
      m.values.push_back(value(rng));
    }
    m.row_offsets.push_back(m.nnz());
  }
  return m;
}

class EngineTest : public ::testing::Test {
 protected:
  EngineTest()
      : device_(make_cpu_device()),
        store_({.path = ":memory:"}),
        engine_({.memory_budget_bytes = 64 << 20,
                 .tuner = {.warmup_runs = 1, .timed_runs = 3},
                 .calibration = {}},
                *device_, store_, format_registry()) {}

  std::unique_ptr<Device> device_;
  SqlitePlanStore store_;
  Engine engine_;
};

template <typename Body>
void expect_error(Body&& body, ErrorCode code, const std::string& text) {
  try {
    body();
    FAIL() << "expected an error containing '" << text << "'";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
  }
}

TEST_F(EngineTest, MultiplyMatchesTheReferenceInBothPrecisions) {
  const auto m = random_matrix(300, 200, 7);
  std::vector<double> x(200), y0(300);
  std::mt19937_64 rng(9);
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  for (auto& e : x) e = value(rng);
  for (auto& e : y0) e = value(rng);
  std::vector<double> expected = y0;
  reference_spmv(m, x.data(), expected.data(), 2.0, -0.5);

  for (Precision p : {Precision::fp64, Precision::fp32}) {
    const auto summary = engine_.add_matrix(m, p, "random");
    const auto out = engine_.multiply(summary.handle, 2.0, -0.5, {x}, {y0});
    ASSERT_EQ(out.y.size(), 1u);
    const double tolerance = p == Precision::fp64 ? 1e-12 : 1e-4;
    for (std::size_t r = 0; r < expected.size(); ++r)
      ASSERT_NEAR(out.y[0][r], expected[r], tolerance * (1 + std::abs(expected[r]))) << "row " << r;
  }
}

TEST_F(EngineTest, SecondMatrixWithTheSameStructureIsACacheHit) {
  auto m = random_matrix(100, 100, 3);
  const auto first = engine_.add_matrix(m, Precision::fp64, "a");
  EXPECT_FALSE(engine_.tune(first.handle, false).cache_hit);
  for (auto& v : m.values) v *= 3.0;  // values do not change the structure
  const auto second = engine_.add_matrix(m, Precision::fp64, "b");
  EXPECT_EQ(first.fingerprint, second.fingerprint);
  const auto outcome = engine_.tune(second.handle, false);
  EXPECT_TRUE(outcome.cache_hit);
  EXPECT_EQ(outcome.plan.tuner_version, kTunerVersion);
  EXPECT_FALSE(engine_.tune(second.handle, true).cache_hit) << "force re-tunes";
}

TEST_F(EngineTest, EachTuningStoresOneSamplePerMeasuredCandidateAndACacheHitNone) {
  const auto m = random_matrix(200, 200, 5);
  const auto a = engine_.add_matrix(m, Precision::fp64, "a");
  const Plan plan = engine_.tune(a.handle, false).plan;
  const auto signature = device_->info().signature();
  auto samples = store_.list_samples(signature, Precision::fp64);
  ASSERT_EQ(samples.size(), plan.candidates_measured);
  bool winner_seen = false;
  for (const MeasurementSample& s : samples) {
    EXPECT_EQ(s.fingerprint, a.fingerprint.hex());
    EXPECT_EQ(s.tuned_ms, samples.front().tuned_ms) << "one tuning";
    EXPECT_EQ(s.measured.features, plan.features);
    EXPECT_GT(s.measured.measured_ms, 0.0);
    EXPECT_EQ(s.model_version, 0u) << "no models predicted it";
    if (s.measured.format == plan.format && s.measured.params == plan.params &&
        s.measured.measured_ms == plan.measured_ms)
      winner_seen = true;
  }
  EXPECT_TRUE(winner_seen) << "the winner's measurement is a sample too";
  const auto b = engine_.add_matrix(m, Precision::fp64, "b");
  EXPECT_TRUE(engine_.tune(b.handle, false).cache_hit);
  EXPECT_EQ(store_.list_samples(signature, Precision::fp64).size(), samples.size())
      << "a cache hit measures nothing";
  EXPECT_TRUE(store_.list_samples(signature, Precision::fp32).empty());
}

TEST_F(EngineTest, ARefitWithoutACalibrationSaysToCalibrateFirst) {
  expect_error([&] { engine_.refit_models(); }, ErrorCode::failed_precondition,
               "calibrate first");
}

TEST_F(EngineTest, CachedPlanForAnUnknownFormatIsReTuned) {
  const auto m = random_matrix(50, 50, 4);
  Plan bogus;
  bogus.format = FormatId{999};
  bogus.format_name = "from_the_future";
  bogus.precision = Precision::fp64;
  bogus.tuner_version = kTunerVersion;
  const PlanKey key{structural_fingerprint(m), device_->info().signature(), Precision::fp64,
                    kTunerVersion, kModelVersion};
  // Stored before the upload, whose background tuning looks it up. measured_ms 0: no re-tune
  // could beat it under the winner rule.
  store_.put(key, bogus);
  const auto summary = engine_.add_matrix(m, Precision::fp64, "");
  const auto outcome = engine_.tune(summary.handle, false);
  EXPECT_FALSE(outcome.cache_hit);
  EXPECT_NE(outcome.plan.format, FormatId{999});
  // The unusable plan was dropped, so the re-tuned one is stored and found next time.
  EXPECT_EQ(store_.find(key), outcome.plan);
  const auto again = engine_.add_matrix(m, Precision::fp64, "again");
  EXPECT_TRUE(engine_.tune(again.handle, false).cache_hit);
}

TEST_F(EngineTest, ForcedReTuneReplacesTheStoredPlanEvenWhenSlower) {
  const auto m = random_matrix(60, 60, 5);
  const auto summary = engine_.add_matrix(m, Precision::fp64, "");
  const PlanKey key{summary.fingerprint, device_->info().signature(), Precision::fp64,
                    kTunerVersion, kModelVersion};
  Plan fastest = engine_.tune(summary.handle, false).plan;
  fastest.measured_ms = 1e-9;  // as if measured on a faster day
  store_.erase(key);
  store_.put(key, fastest);
  const auto forced = engine_.tune(summary.handle, true);
  EXPECT_FALSE(forced.cache_hit);
  EXPECT_EQ(store_.find(key), forced.plan) << "force stores what it measured";
}

std::vector<double> reference_y(const CsrMatrix<double>& m, const std::vector<double>& x) {
  std::vector<double> y(static_cast<std::size_t>(m.rows));
  reference_spmv(m, x.data(), y.data(), 1.0, 0.0);
  return y;
}

void expect_near(const std::vector<double>& got, const std::vector<double>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t r = 0; r < want.size(); ++r)
    ASSERT_NEAR(got[r], want[r], 1e-12 * (1 + std::abs(want[r]))) << "row " << r;
}

TEST_F(EngineTest, AMatrixIsMultipliedAtOnceAndTheTunedPlanReplacesTheDefault) {
  const auto m = random_matrix(400, 300, 11);
  const std::vector<double> x(300, 0.5);
  const auto summary = engine_.add_matrix(m, Precision::fp64, "");
  // Servable before any tuning result: whichever plan serves, y is right.
  expect_near(engine_.multiply(summary.handle, 1, 0, {x}, {}).y[0], reference_y(m, x));
  const auto tuned = engine_.tune(summary.handle, false);  // waits for the background tuning
  const auto after = engine_.multiply(summary.handle, 1, 0, {x}, {});
  EXPECT_FALSE(after.default_plan);
  EXPECT_EQ(after.plan, tuned.plan);
  EXPECT_GT(after.plan.candidates_measured, 0u);
  expect_near(after.y[0], reference_y(m, x));
}

TEST_F(EngineTest, TheDefaultPlanIsTheCpuCsrFormatOnTheCpu) {
  const auto m = random_matrix(20, 20, 12);
  const Plan plan = default_plan(format_registry(), extract_features(m), device_->info(),
                                 Precision::fp64);
  EXPECT_EQ(plan.format_name, "cpu_csr");
  EXPECT_EQ(plan.candidates_measured, 0u);
}

TEST_F(EngineTest, MultipliesDuringRepeatedSwapsAreAllCorrect) {
  const auto m = random_matrix(500, 500, 13);
  const auto summary = engine_.add_matrix(m, Precision::fp64, "");
  std::vector<double> x(500);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = std::sin(static_cast<double>(i));
  const auto want = reference_y(m, x);
  std::atomic<bool> done{false};
  std::atomic<int> multiplies{0};
  std::thread multiplier([&] {
    while (!done) {
      expect_near(engine_.multiply(summary.handle, 1, 0, {x}, {}).y[0], want);
      ++multiplies;
    }
  });
  // The multiplier is running before the first swap; then three swaps at least, and more (up
  // to 50) until a multiply has landed among them: on a loaded 2-core machine the three can
  // finish before the multiplier thread is scheduled again.
  while (multiplies.load() == 0) std::this_thread::yield();
  const int before = multiplies.load();
  int swaps = 0;
  while (swaps < 3 || (multiplies.load() == before && swaps < 50)) {
    engine_.tune(summary.handle, /*force=*/true);
    ++swaps;
  }
  done = true;
  multiplier.join();
  EXPECT_GT(multiplies.load(), before) << "no multiply ran while " << swaps << " plans were swapped";
}

TEST_F(EngineTest, ALargerExpectedMultipliesHintWidensTheSearch) {
  const auto m = random_matrix(100, 100, 14);
  const auto summary = engine_.add_matrix(m, Precision::fp64, "", /*expected_multiplies=*/1);
  const auto narrow = engine_.tune(summary.handle, false);
  EXPECT_EQ(narrow.plan.tuning.expected_multiplies, 1u);
  EXPECT_EQ(narrow.plan.tuning.mode, TuneMode::model_only);
  const auto wide = engine_.tune(summary.handle, false, 1'000'000'000);
  EXPECT_EQ(wide.plan.tuning.expected_multiplies, 1'000'000'000u);
  EXPECT_EQ(wide.plan.tuning.mode, TuneMode::exhaustive);
  EXPECT_GE(wide.plan.candidates_measured, narrow.plan.candidates_measured);
}

TEST_F(EngineTest, BadRequestsGetPreciseErrors) {
  const auto summary = engine_.add_matrix(random_matrix(10, 8, 5), Precision::fp64, "");
  expect_error([&] { engine_.multiply("0123", 1, 0, {std::vector<double>(8)}, {}); },
               ErrorCode::not_found, "no resident matrix has handle '0123'");
  expect_error([&] { engine_.multiply(summary.handle, 1, 0, {std::vector<double>(7)}, {}); },
               ErrorCode::invalid_argument, "x[0] has 7 entries, the matrix has 8 columns");
  expect_error([&] { engine_.multiply(summary.handle, 1, 1, {std::vector<double>(8)}, {}); },
               ErrorCode::invalid_argument, "one y per x is needed");
  std::vector<double> nan_x(8, 1.0);
  nan_x[3] = std::nan("");
  expect_error([&] { engine_.multiply(summary.handle, 1, 0, {nan_x}, {}); },
               ErrorCode::invalid_argument, "x[0][3] is not finite");
  expect_error([&] { engine_.multiply(summary.handle, 1, 0, {}, {}); },
               ErrorCode::invalid_argument, "no x vectors");
}

TEST_F(EngineTest, MatrixOverTheMemoryBudgetIsRefusedAndOthersStayServed) {
  const auto kept = engine_.add_matrix(random_matrix(10, 10, 1), Precision::fp64, "");
  CsrMatrix<double> huge;
  huge.rows = 1 << 20;
  huge.cols = 1 << 20;
  huge.row_offsets.assign((1 << 20) + 1, 0);
  huge.col_indices.resize(0);
  // 2^20 rows + cols of fp64 vectors plus 8-byte offsets need ~25 MB of a 1 MiB budget.
  Engine small({.memory_budget_bytes = 1 << 20, .tuner = {}, .calibration = {}}, *device_, store_,
               format_registry());
  expect_error([&] { small.add_matrix(huge, Precision::fp64, "huge"); },
               ErrorCode::resource_exhausted, "memory budget");
  EXPECT_NO_THROW(engine_.multiply(kept.handle, 1, 0, {std::vector<double>(10, 1.0)}, {}));
}

TEST_F(EngineTest, ReleasedHandleIsGone) {
  const auto summary = engine_.add_matrix(random_matrix(10, 10, 2), Precision::fp64, "");
  EXPECT_EQ(engine_.list().size(), 1u);
  engine_.release(summary.handle);
  EXPECT_TRUE(engine_.list().empty());
  expect_error([&] { engine_.release(summary.handle); }, ErrorCode::not_found, summary.handle);
}

// ---- Issue 16: a plan's partition through the engine's store path --------------------------
// cuda_ehyb's METIS and cuda_bro_ell's RCM need a GPU to build; on the CPU a test format stands
// in for them: its build asks the BuildSource for a row order (a partition it "computes",
// counted), multiplies row by row in that order and exposes it as its partition(). The serving
// default (cpu_csr's id, so default_plan picks it) is cpu_csr slowed by a sleep, so the tuning
// always chooses the partitioned format.

constexpr std::string_view kTestOrderKind = "test_reversed_rows";
std::atomic<int> test_order_computations{0};

class PartitionedOperator final : public SpmvOperator {
 public:
  PartitionedOperator(const CsrMatrix<double>& m, std::shared_ptr<const PlanPartition> order)
      : m_(m), order_(std::move(order)) {}
  void apply(const void* x_raw, void* y_raw, double alpha, double beta) override {
    const auto* x = static_cast<const double*>(x_raw);  // CPU device: host memory
    auto* y = static_cast<double*>(y_raw);
    for (const std::int32_t r : order_->entries) {
      double sum = 0.0;
      for (RowOffset k = m_.row_offsets[static_cast<std::size_t>(r)];
           k < m_.row_offsets[static_cast<std::size_t>(r) + 1]; ++k)
        sum +=
            m_.values[static_cast<std::size_t>(k)] * x[m_.col_indices[static_cast<std::size_t>(k)]];
      y[r] = beta == 0.0 ? alpha * sum : alpha * sum + beta * y[r];
    }
  }
  Precision precision() const noexcept override { return Precision::fp64; }
  std::size_t device_bytes() const noexcept override { return 0; }
  std::shared_ptr<const PlanPartition> partition() const override { return order_; }

 private:
  CsrMatrix<double> m_;
  std::shared_ptr<const PlanPartition> order_;
};

class PartitionedRules final : public FormatRules {
 public:
  FormatId id() const noexcept override { return FormatId{900}; }
  std::string_view name() const noexcept override { return "test_partitioned"; }
  bool needs_gpu() const noexcept override { return false; }
  std::string_view model_family() const noexcept override { return "bytes"; }
  bool admissible(const MatrixFeatures&, const DeviceInfo& device, Precision precision,
                  std::uint64_t) const override {
    return !device.is_gpu && precision == Precision::fp64;
  }
  std::vector<Candidate> candidates(const MatrixFeatures&, const DeviceInfo&) const override {
    return {Candidate{FormatId{900}, {}, {}}};
  }
  std::uint64_t device_bytes(const MatrixFeatures& f, Precision, const Candidate&) const override {
    return static_cast<std::uint64_t>(f.nnz) * 12;
  }
  static std::unique_ptr<SpmvOperator> build(const BuildSource& source, Precision,
                                             const Candidate&) {
    const CsrMatrix<double>& m = source.host();
    const std::string kind(kTestOrderKind);
    auto order = source.partition(
        kind, [&](const PlanPartition& held) { return permutation_problem(held, kind, m.rows); },
        [&] {
          ++test_order_computations;
          std::vector<std::int32_t> reversed(static_cast<std::size_t>(m.rows));
          for (std::size_t i = 0; i < reversed.size(); ++i)
            reversed[i] = static_cast<std::int32_t>(reversed.size() - 1 - i);
          return reversed;
        });
    return std::make_unique<PartitionedOperator>(m, std::move(order));
  }
};

class SlowOperator final : public SpmvOperator {
 public:
  explicit SlowOperator(std::unique_ptr<SpmvOperator> inner) : inner_(std::move(inner)) {}
  void apply(const void* x, void* y, double alpha, double beta) override {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    inner_->apply(x, y, alpha, beta);
  }
  Precision precision() const noexcept override { return inner_->precision(); }
  std::size_t device_bytes() const noexcept override { return inner_->device_bytes(); }

 private:
  std::unique_ptr<SpmvOperator> inner_;
};

class SlowCpuCsrRules final : public FormatRules {
 public:
  FormatId id() const noexcept override { return kCpuCsrFormatId; }
  std::string_view name() const noexcept override { return "cpu_csr"; }
  bool needs_gpu() const noexcept override { return false; }
  std::string_view model_family() const noexcept override { return "bytes"; }
  bool admissible(const MatrixFeatures& f, const DeviceInfo& d, Precision p,
                  std::uint64_t budget) const override {
    return inner_.admissible(f, d, p, budget);
  }
  std::vector<Candidate> candidates(const MatrixFeatures& f, const DeviceInfo& d) const override {
    return inner_.candidates(f, d);
  }
  std::uint64_t device_bytes(const MatrixFeatures& f, Precision p,
                             const Candidate& c) const override {
    return inner_.device_bytes(f, p, c);
  }
  static std::unique_ptr<SpmvOperator> build(const BuildSource& source, Precision precision,
                                             const Candidate& candidate) {
    return std::make_unique<SlowOperator>(CpuCsrRules::build(source, precision, candidate));
  }

 private:
  CpuCsrRules inner_;
};

const FormatRegistry& partitioned_registry() {
  static const FormatRegistry registry = [] {
    FormatRegistry r;
    r.add(std::make_unique<SlowCpuCsrRules>(), &SlowCpuCsrRules::build);
    r.add(std::make_unique<PartitionedRules>(), &PartitionedRules::build);
    return r;
  }();
  return registry;
}

// A format whose thorough features size what another format reads (as cuda_bro_ell's RCM sizing
// is cuda_csr_rcm's): offers nothing itself.
struct TestSizing {
  std::int64_t sized = 0;
  static constexpr auto kFields = std::tuple{declare_field("sized", &TestSizing::sized)};
  friend bool operator==(const TestSizing&, const TestSizing&) = default;
};

class SizingRules final : public FormatRules {
 public:
  FormatId id() const noexcept override { return FormatId{901}; }
  std::string_view name() const noexcept override { return "test_sizing"; }
  bool needs_gpu() const noexcept override { return false; }
  std::string_view model_family() const noexcept override { return "bytes"; }
  bool admissible(const MatrixFeatures&, const DeviceInfo&, Precision,
                  std::uint64_t) const override {
    return false;
  }
  std::vector<Candidate> candidates(const MatrixFeatures&, const DeviceInfo&) const override {
    return {};
  }
  std::uint64_t device_bytes(const MatrixFeatures&, Precision, const Candidate&) const override {
    return 0;
  }
  std::optional<FieldSet> own_features(const CsrMatrix<double>&,
                                       const MatrixFeatures&) const override {
    return FieldSet::of(TestSizing{.sized = 0});
  }
  std::optional<ThoroughOwnFeatures> thorough_own_features(const CsrMatrix<double>&,
                                                           const MatrixFeatures&) const override {
    return ThoroughOwnFeatures{.features = FieldSet::of(TestSizing{.sized = 1}), .partitions = {}};
  }
  static std::unique_ptr<SpmvOperator> build(const BuildSource&, Precision, const Candidate&) {
    throw Error(ErrorCode::internal, "test_sizing offers no candidate to build");
  }
};

// test_partitioned's operator, offered only where test_sizing's thorough features say so.
class ReaderRules final : public FormatRules {
 public:
  FormatId id() const noexcept override { return FormatId{902}; }
  std::string_view name() const noexcept override { return "test_reader"; }
  bool needs_gpu() const noexcept override { return false; }
  std::string_view model_family() const noexcept override { return "bytes"; }
  bool admissible(const MatrixFeatures& f, const DeviceInfo& device, Precision precision,
                  std::uint64_t) const override {
    return !device.is_gpu && precision == Precision::fp64 && !candidates(f, device).empty();
  }
  std::vector<Candidate> candidates(const MatrixFeatures& f, const DeviceInfo&) const override {
    const auto it = f.format_features.find("test_sizing");
    if (it == f.format_features.end() || it->second.as<TestSizing>("test_sizing").sized != 1)
      return {};
    return {Candidate{FormatId{902}, {}, {}}};
  }
  std::uint64_t device_bytes(const MatrixFeatures& f, Precision, const Candidate&) const override {
    return static_cast<std::uint64_t>(f.nnz) * 12;
  }
  static std::unique_ptr<SpmvOperator> build(const BuildSource& source, Precision precision,
                                             const Candidate& candidate) {
    return PartitionedRules::build(source, precision, candidate);
  }
};

std::vector<double> multiply_once(Engine& engine, const std::string& handle,
                                  const std::vector<double>& x) {
  return engine.multiply(handle, 1.0, 0.0, {x}, {}).y.at(0);
}

// A plan made from a thorough pass whose format reads another format's thorough features: a
// restarted engine's upload with the default hint (a standard pass) takes the stored features of
// every format and serves the plan from the cache, instead of dropping it and tuning again.
TEST(EnginePartitions, APlanReadingAnotherFormatsThoroughFeaturesSurvivesAStandardPass) {
  static const FormatRegistry registry = [] {
    FormatRegistry r;
    r.add(std::make_unique<SlowCpuCsrRules>(), &SlowCpuCsrRules::build);
    r.add(std::make_unique<SizingRules>(), &SizingRules::build);
    r.add(std::make_unique<ReaderRules>(), &ReaderRules::build);
    return r;
  }();
  const auto device = make_cpu_device();
  SqlitePlanStore store({.path = ":memory:"});
  const EngineConfig config{.memory_budget_bytes = 64 << 20,
                            .tuner = {.warmup_runs = 1, .timed_runs = 3},
                            .calibration = {}};
  const CsrMatrix<double> m = random_matrix(200, 200, 21);
  {
    Engine engine(config, *device, store, registry);
    const auto summary = engine.add_matrix(m, Precision::fp64, "many multiplies");
    const TuneOutcome outcome = engine.tune(summary.handle, false, 2'000'000);
    EXPECT_FALSE(outcome.cache_hit);
    ASSERT_EQ(outcome.plan.format, FormatId{902});
    ASSERT_TRUE(outcome.plan.partition);
  }
  {
    Engine engine(config, *device, store, registry);
    const auto summary = engine.add_matrix(m, Precision::fp64, "after a restart");
    const TuneOutcome outcome = engine.tune(summary.handle, false);
    EXPECT_TRUE(outcome.cache_hit);
    EXPECT_EQ(outcome.plan.format, FormatId{902});
  }
}

TEST(EnginePartitions, ATunedPlansPartitionIsStoredAndARestartedEngineLoadsItInsteadOfComputing) {
  const auto device = make_cpu_device();
  SqlitePlanStore store({.path = ":memory:"});
  const EngineConfig config{.memory_budget_bytes = 64 << 20,
                            .tuner = {.warmup_runs = 1, .timed_runs = 3},
                            .calibration = {}};
  const CsrMatrix<double> m = random_matrix(200, 200, 11);
  std::vector<double> x(200);
  std::mt19937_64 rng(13);
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  for (double& v : x) v = value(rng);
  std::vector<double> expected(200, 0.0);
  reference_spmv(m, x.data(), expected.data(), 1.0, 0.0);
  const auto expect_reference = [&](const std::vector<double>& y) {
    ASSERT_EQ(y.size(), expected.size());
    for (std::size_t r = 0; r < y.size(); ++r)
      ASSERT_NEAR(y[r], expected[r], 1e-12 * (1 + std::abs(expected[r]))) << "row " << r;
  };
  const PlanKey key{structural_fingerprint(m), device->info().signature(), Precision::fp64,
                    kTunerVersion, kModelVersion};
  test_order_computations = 0;

  {  // The first daemon tunes: the partitioned format wins and its order is stored with it.
    Engine engine(config, *device, store, partitioned_registry());
    const auto summary = engine.add_matrix(m, Precision::fp64, "first");
    const TuneOutcome outcome = engine.tune(summary.handle, false);
    EXPECT_FALSE(outcome.cache_hit);
    ASSERT_EQ(outcome.plan.format, FormatId{900});
    EXPECT_EQ(test_order_computations, 1);
    expect_reference(multiply_once(engine, summary.handle, x));
  }
  const std::optional<Plan> stored = store.find(key);
  ASSERT_TRUE(stored.has_value());
  ASSERT_TRUE(stored->partition);
  EXPECT_EQ(stored->partition->kind, kTestOrderKind);
  ASSERT_EQ(stored->partition->entries.size(), 200u);
  EXPECT_EQ(stored->partition->entries.front(), 199);

  {  // A restart: the cache hit's build loads the order; nothing is computed.
    Engine engine(config, *device, store, partitioned_registry());
    const auto summary = engine.add_matrix(m, Precision::fp64, "after a restart");
    EXPECT_TRUE(engine.tune(summary.handle, false).cache_hit);
    EXPECT_EQ(test_order_computations, 1);
    expect_reference(multiply_once(engine, summary.handle, x));
  }

  // A damaged stored order (a row repeated) is refused by the build and computed again; the
  // result stays right.
  Plan damaged = *stored;
  std::vector<std::int32_t> entries = stored->partition->entries;
  entries[3] = entries[4];
  damaged.partition =
      std::make_shared<const PlanPartition>(PlanPartition{std::string(kTestOrderKind), entries});
  store.erase(key);
  store.put(key, damaged);
  {
    Engine engine(config, *device, store, partitioned_registry());
    const auto summary = engine.add_matrix(m, Precision::fp64, "damaged order");
    EXPECT_TRUE(engine.tune(summary.handle, false).cache_hit);
    EXPECT_EQ(test_order_computations, 2);
    expect_reference(multiply_once(engine, summary.handle, x));
  }
}

TEST(MatrixHandle, IsThirtyTwoHexDigitsAndDiffersEachTime) {
  const auto a = new_matrix_handle(), b = new_matrix_handle();
  EXPECT_EQ(a.size(), 32u);
  EXPECT_EQ(a.find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_NE(a, b);
}

}  // namespace
}  // namespace spmvd

namespace spmvd {
namespace {

std::int64_t rcm_sized(const Plan& plan) {
  const std::optional<BroEllFeatures> own = cuda_bro_ell_features(plan.features);
  return own ? own->rcm_sized : -1;
}

TEST_F(EngineTest, TheFeaturePassIsThoroughOnlyWhereTheExpectedMultipliesPayForIt) {
  // A band of 7 with rows and columns renumbered at random: where BRO-ELL's RCM layouts pay.
  const auto m = renumber_symmetric(generate_matrix("banded:rows=3000,bandwidth=3"), 17);
  const auto summary = engine_.add_matrix(m, Precision::fp64, "band");
  // The default 1000 multiplies: a standard pass, RCM not sized.
  const TuneOutcome first = engine_.tune(summary.handle, false);
  EXPECT_EQ(rcm_sized(first.plan), 0);
  // A later Tune expecting 10^6 or more widens the tuning and extends the pass.
  const TuneOutcome widened = engine_.tune(summary.handle, false, 2'000'000);
  EXPECT_EQ(widened.plan.tuning.expected_multiplies, 2'000'000u);
  EXPECT_EQ(rcm_sized(widened.plan), 1);
}

// An exhaustive tuning on standard features never saw the thorough pass's candidates: a hint
// that pays for that pass still widens it (on a loaded host the budget tuning above can fit
// every candidate and end exhaustive too).
TEST(EngineFeatureEffort, AnExhaustiveTuningIsWidenedWhenTheHintPaysForAThoroughPass) {
  const auto device = make_cpu_device();
  SqlitePlanStore store({.path = ":memory:"});
  Engine engine({.memory_budget_bytes = 64 << 20,
                 .tuner = {.warmup_runs = 1, .timed_runs = 3, .mode = TuneMode::exhaustive},
                 .calibration = {}},
                *device, store, format_registry());
  const auto m = renumber_symmetric(generate_matrix("banded:rows=3000,bandwidth=3"), 17);
  const auto summary = engine.add_matrix(m, Precision::fp64, "band");
  const TuneOutcome first = engine.tune(summary.handle, false);
  ASSERT_EQ(first.plan.tuning.mode, TuneMode::exhaustive);
  EXPECT_EQ(rcm_sized(first.plan), 0);
  const TuneOutcome widened = engine.tune(summary.handle, false, 2'000'000);
  EXPECT_EQ(widened.plan.tuning.expected_multiplies, 2'000'000u);
  EXPECT_EQ(rcm_sized(widened.plan), 1);
}

// A calibration for this machine's CPU device with only the bytes model, at 10 GB/s: cpu_csr
// (converted where it is, the default plan on the CPU) is predicted at ~1.2 ns a non-zero, so a
// host-built format's ~28 ns a non-zero is repaid from a few dozen multiplies on.
std::string bytes_only_cpu_calibration(const Device& device) {
  DeviceCalibration calibration;
  calibration.device = device.info();
  for (ModelSet* set : {&calibration.fp32, &calibration.fp64}) {
    set->device_signature = calibration.device.signature();
    set->records.update<BytesRecord>([&](BytesRecord& r) {
      r.shared = BytesCalibration{
          .time_vs_bytes = {.intercept = 1e-4, .slope = 1.0 / 1e7, .quality = {}}};
    });
  }
  calibration.fp32.precision = Precision::fp32;
  calibration.fp64.precision = Precision::fp64;
  return device_calibration_to_json(calibration);
}

// Tuner version 8: a pass for a tuning whose multiplies cannot repay a host build leaves those
// formats out (no features, no candidates); a later hint that repays them extends the pass and
// widens the tuning, which then offers them.
TEST(EngineFeatureEffort, FormatsWhoseBuildTheHintCannotRepayAreLeftOutUntilAHintRepaysThem) {
  const auto device = make_cpu_device();
  SqlitePlanStore store({.path = ":memory:"});
  store.put_calibration(device->info().signature(), kModelVersion,
                        bytes_only_cpu_calibration(*device));
  Engine engine({.memory_budget_bytes = 64 << 20,
                 .tuner = {.warmup_runs = 1, .timed_runs = 3},
                 .calibration = {}},
                *device, store, format_registry());
  ASSERT_TRUE(engine.load_calibration(false, {}));
  const FormatEntry* cpu_coo = format_registry().find("cpu_coo");
  ASSERT_NE(cpu_coo, nullptr);
  ASSERT_FALSE(cpu_coo->builds_on_device);  // built on the host: charged at 28 ns a non-zero
  const auto m = random_matrix(20'000, 20'000, 5);
  const auto summary = engine.add_matrix(m, Precision::fp64, "random", /*expected=*/2);
  const TuneOutcome first = engine.tune(summary.handle, false, 2);
  EXPECT_TRUE(first.plan.features.left_out("cpu_coo"));
  EXPECT_FALSE(first.plan.features.left_out("cpu_csr"));
  EXPECT_NE(first.plan.format, cpu_coo->rules->id());
  const std::vector<MeasurementSample> before =
      store.list_samples(device->info().signature(), Precision::fp64);
  ASSERT_FALSE(before.empty());
  for (const MeasurementSample& s : before) EXPECT_NE(s.measured.format, cpu_coo->rules->id());

  // 10^5 multiplies repay it: the pass is extended and the tuning widened, measuring cpu_coo.
  const TuneOutcome widened = engine.tune(summary.handle, false, 100'000);
  EXPECT_EQ(widened.plan.tuning.expected_multiplies, 100'000u);
  EXPECT_FALSE(widened.plan.features.left_out("cpu_coo"));
  const std::vector<MeasurementSample> after =
      store.list_samples(device->info().signature(), Precision::fp64);
  EXPECT_TRUE(std::ranges::any_of(after, [&](const MeasurementSample& s) {
    return s.measured.format == cpu_coo->rules->id();
  }));
}

}  // namespace
}  // namespace spmvd
