#include "tuner/tuner.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <future>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "core/error.hpp"
#include "kernels/build_source.hpp"
#include "kernels/device_lock.hpp"
#include "kernels/formats/cpu_csr/cpu_csr_rules.hpp"
#include "kernels/device.hpp"
#include "kernels/format_registry.hpp"
#include "kernels/hashed_uniform.hpp"
#include "kernels/spmv_operator.hpp"
#include "kernels/tests/counting_device.hpp"
#include "models/family_model.hpp"

namespace spmvd {
namespace {

Candidate candidate(std::uint16_t format, std::uint32_t block_size) {
  Candidate c;
  c.format = FormatId{format};
  c.launch.block_size = block_size;
  return c;
}

// Rules with a fixed candidate list and byte count, to test enumeration without kernels.
class FixedRules final : public FormatRules {
 public:
  FixedRules(std::uint16_t id, bool gpu, std::uint64_t bytes) : id_{id}, gpu_(gpu), bytes_(bytes) {}
  FormatId id() const noexcept override { return id_; }
  std::string_view name() const noexcept override { return gpu_ ? "fixed_gpu" : "fixed_cpu"; }
  bool needs_gpu() const noexcept override { return gpu_; }
  std::string_view model_family() const noexcept override { return "bytes"; }
  bool admissible(const MatrixFeatures&, const DeviceInfo&, Precision,
                  std::uint64_t budget) const override {
    return bytes_ <= budget;
  }
  std::vector<Candidate> candidates(const MatrixFeatures&, const DeviceInfo&) const override {
    return {candidate(id_.value, 128), candidate(id_.value, 256)};
  }
  std::uint64_t device_bytes(const MatrixFeatures&, Precision, const Candidate&) const override {
    return bytes_;
  }

 private:
  FormatId id_;
  bool gpu_;
  std::uint64_t bytes_;
};

std::unique_ptr<SpmvOperator> never_built(const BuildSource&, Precision,
                                          const Candidate&) {
  throw Error(ErrorCode::internal, "enumeration must not build formats");
}

TEST(EnumerateCandidates, LeavesOutGpuFormatsOnTheCpuAndFormatsOverBudget) {
  FormatRegistry registry;
  registry.add(std::make_unique<FixedRules>(7, false, 100), never_built);
  registry.add(std::make_unique<FixedRules>(8, true, 100), never_built);
  const MatrixFeatures features;
  DeviceInfo cpu;
  cpu.is_gpu = false;
  const auto on_cpu = enumerate_candidates(registry, features, cpu, Precision::fp64, 1000);
  ASSERT_EQ(on_cpu.size(), 2u);
  EXPECT_EQ(on_cpu[0].format, FormatId{7});

  DeviceInfo gpu;
  gpu.is_gpu = true;
  EXPECT_EQ(enumerate_candidates(registry, features, gpu, Precision::fp64, 1000).size(), 4u);
  EXPECT_TRUE(enumerate_candidates(registry, features, gpu, Precision::fp64, 50).empty());
}

// A format that chooses its partition against the models: one candidate without them, the
// block size the part predictor finds cheapest with them.
class ModelChosenRules final : public FormatRules {
 public:
  FormatId id() const noexcept override { return FormatId{9}; }
  std::string_view name() const noexcept override { return "model_chosen"; }
  bool needs_gpu() const noexcept override { return false; }
  std::string_view model_family() const noexcept override { return "bytes"; }
  bool admissible(const MatrixFeatures&, const DeviceInfo&, Precision,
                  std::uint64_t) const override {
    return true;
  }
  std::vector<Candidate> candidates(const MatrixFeatures&, const DeviceInfo&) const override {
    return {candidate(9, 128)};
  }
  std::uint64_t device_bytes(const MatrixFeatures&, Precision, const Candidate&) const override {
    return 10;
  }
  std::vector<Candidate> candidates_chosen_by(const PartTimePredictor& predictor,
                                              const MatrixFeatures& features,
                                              const DeviceInfo&) const override {
    Candidate best = candidate(9, 64);
    double best_ms = 1e300;
    for (std::uint32_t block : {64u, 128u, 256u, 512u}) {
      const FormatPart part{.runs = FormatPart::Runs::gpu,
                            .features = features,
                            .candidate = candidate(9, block)};
      const double ms = predictor.part_ms(part).value_or(1e300);
      if (ms < best_ms) {
        best_ms = ms;
        best = part.candidate;
      }
    }
    return {best};
  }
};

// Predicts |block size - 256| + 1 ms.
class BlockDistancePredictor final : public PartTimePredictor {
 public:
  std::optional<double> part_ms(const FormatPart& part) const override {
    return std::abs(static_cast<double>(part.candidate.launch.block_size) - 256.0) + 1.0;
  }
};

TEST(EnumerateCandidates, LetsAComposedFormatChooseAgainstThePartPredictor) {
  FormatRegistry registry;
  registry.add(std::make_unique<ModelChosenRules>(), never_built);
  registry.add(std::make_unique<FixedRules>(7, false, 100), never_built);
  const MatrixFeatures features;
  const DeviceInfo cpu;
  const BlockDistancePredictor predictor;
  const auto without = enumerate_candidates(registry, features, cpu, Precision::fp64, 1000);
  ASSERT_EQ(without.size(), 3u);
  EXPECT_EQ(without[0], candidate(9, 128));
  const auto with = enumerate_candidates(registry, features, cpu, Precision::fp64, 1000, &predictor);
  ASSERT_EQ(with.size(), 3u);
  EXPECT_EQ(with[0], candidate(9, 256));
  // A format that does not choose by the models offers the same either way.
  EXPECT_EQ(with[1], without[1]);
  // Where its build could not be repaid the composed format is not asked to choose against
  // the models (tune_matrix's ChoosesByModels): it offers its model-free candidates.
  const auto unrepayable =
      enumerate_candidates(registry, features, cpu, Precision::fp64, 1000, &predictor,
                           [](const FormatEntry& entry) { return entry.rules->id() != FormatId{9}; });
  EXPECT_EQ(unrepayable, without);
  EXPECT_EQ(with[2], without[2]);
}

TEST(EnumerateCandidates, OffersNothingOfAFormatTheFeaturePassLeftOut) {
  FormatRegistry registry;
  registry.add(std::make_unique<ModelChosenRules>(), never_built);
  registry.add(std::make_unique<FixedRules>(7, false, 100), never_built);
  MatrixFeatures features;
  const DeviceInfo cpu;
  const auto all = enumerate_candidates(registry, features, cpu, Precision::fp64, 1000);
  features.formats_left_out = {std::string(registry.find(FormatId{9})->rules->name())};
  const auto offered = enumerate_candidates(registry, features, cpu, Precision::fp64, 1000);
  ASSERT_FALSE(offered.empty());
  EXPECT_LT(offered.size(), all.size());
  for (const Candidate& c : offered) EXPECT_EQ(c.format, FormatId{7});
}

// Predicts every candidate at `ms`, or nothing.
class ConstantPredictor final : public CandidatePredictor {
 public:
  explicit ConstantPredictor(std::optional<double> ms) : ms_(ms) {}
  std::optional<Prediction> predict(const Candidate&) const override {
    if (!ms_) return std::nullopt;
    return Prediction{.ms = *ms_};
  }

 private:
  std::optional<double> ms_;
};

TEST(RepayableFormats, AHostBuildMustCostLessThanTheServingPlansExpectedMultiplies) {
  FormatRegistry registry;
  registry.add(std::make_unique<FixedRules>(7, false, 100), never_built, /*builds_on_device=*/true);
  registry.add(std::make_unique<FixedRules>(8, true, 100), never_built, /*builds_on_device=*/false);
  const FormatEntry& device_built = *registry.find(FormatId{7});
  const FormatEntry& host_built = *registry.find(FormatId{8});
  TunerOptions options;
  options.device_build_ns_per_nonzero = 0.3;
  options.host_build_ns_per_nonzero = 28.0;
  // 10^6 nonzeros: a host build is estimated at 28 ms, a device one at 0.3 ms.
  const RegistryBuildCostEstimate costs(registry, options, 1'000'000, nullptr);
  const Candidate serving = candidate(7, 256);
  // The serving plan at 0.02 ms a multiply: 1000 multiplies take 20 ms, less than the host
  // build, which no plan could repay then; 2000 take 40 ms, and it could.
  const ConstantPredictor predictor(0.02);
  const FormatFilter at_1000 = repayable_formats(predictor, costs, serving, 1000);
  ASSERT_TRUE(at_1000);
  EXPECT_TRUE(at_1000(device_built));
  EXPECT_FALSE(at_1000(host_built));
  EXPECT_TRUE(repayable_formats(predictor, costs, serving, 2000)(host_built));
  // A device build is never refused, even where its estimate is not repaid either.
  EXPECT_TRUE(repayable_formats(predictor, costs, serving, 1)(device_built));
  // Without a prediction of the serving plan nothing can be judged: every format.
  EXPECT_FALSE(repayable_formats(ConstantPredictor(std::nullopt), costs, serving, 1000));
}

// Formats name their model family (FormatRules::model_family); nothing else keeps a format ->
// family table. A name no family is registered under would silently fall back to the bytes
// model, so every registered format's is checked (every build registers every format's rules).
TEST(ModelFamilies, EveryFormatNamesARegisteredFamily) {
  ASSERT_FALSE(format_registry().entries().empty());
  for (const FormatEntry& entry : format_registry().entries()) {
    const FamilyEntry* family = find_model_family(entry.rules->model_family());
    EXPECT_NE(family, nullptr) << entry.rules->name() << " names model family '"
                               << entry.rules->model_family()
                               << "', which models/families/registry.cpp does not register";
    if (family != nullptr)
      EXPECT_NE(family->make, nullptr)
          << entry.rules->name() << " names model family '" << family->name
          << "', which keeps a record but predicts no format";
  }
}

TEST(ModelFamilies, MapTheCatalogueToTheModelsCalibratedForIt) {
  const auto family = [](std::uint16_t id) {
    const FormatEntry* entry = format_registry().find(FormatId{id});
    return entry == nullptr ? std::string("(none)") : std::string(entry->rules->model_family());
  };
  EXPECT_EQ(family(1), "bytes");       // cpu_csr
  EXPECT_EQ(family(2), "csr_vector");  // cuda_csr_vector
  EXPECT_EQ(family(3), "bytes");       // cusparse_csr
  EXPECT_EQ(family(4), "csr_vector");  // cuda_csr_scalar: the 1-lane variant
  EXPECT_EQ(family(5), "ell");         // cuda_ell
  EXPECT_EQ(family(6), "coo");         // cuda_coo
  EXPECT_EQ(family(7), "hyb");         // cuda_hyb
  EXPECT_EQ(family(8), "bytes");       // cuda_sell
  EXPECT_EQ(family(9), "bytes");       // cusparse_coo
  EXPECT_EQ(family(10), "bytes");      // cusparse_sell
  EXPECT_EQ(family(11), "bytes");      // cusparse_bsr
  EXPECT_EQ(family(12), "coo");        // cpu_coo
}

TEST(ModelFamilies, AreRegisteredOnceEachWithTheBytesModelAmongThem) {
  std::set<std::string_view> names;
  for (const FamilyEntry& entry : model_families()) {
    EXPECT_TRUE(names.insert(entry.name).second) << "family '" << entry.name << "' twice";
    EXPECT_EQ(find_model_family(entry.name), &entry);
  }
  EXPECT_TRUE(names.contains(kBytesFamily));
  EXPECT_EQ(find_model_family("blocked_ell"), nullptr);
}

}  // namespace
// Format 7 converted on the device, format 8 built on the host; builds at 0.5 and 20 ns a
// nonzero unless measured.
class RegistryBuildCostEstimateTest : public ::testing::Test {
 protected:
  RegistryBuildCostEstimateTest() {
    registry.add(std::make_unique<FixedRules>(7, false, 100), never_built,
                 /*builds_on_device=*/true);
    registry.add(std::make_unique<FixedRules>(8, true, 100), never_built,
                 /*builds_on_device=*/false);
    options.device_build_ns_per_nonzero = 0.5;
    options.host_build_ns_per_nonzero = 20.0;
  }
  FormatRegistry registry;
  TunerOptions options;
  const Candidate on_device{.format = FormatId{7}, .params = {}, .launch = {}};
  const Candidate on_host{.format = FormatId{8}, .params = {}, .launch = {}};
};

TEST_F(RegistryBuildCostEstimateTest, ChargesHostBuildsMoreThanDeviceBuildsAndTheServingBuildNothing) {
  const RegistryBuildCostEstimate estimate(registry, options, 2'000'000, &on_device);
  EXPECT_DOUBLE_EQ(estimate.build_ms(on_host), 40.0);  // 20 ns x 2M nonzeros
  EXPECT_DOUBLE_EQ(estimate.build_ms(on_device), 0.0);  // it is serving already
  const RegistryBuildCostEstimate unserved(registry, options, 2'000'000, nullptr);
  EXPECT_DOUBLE_EQ(unserved.build_ms(on_device), 1.0);
}

TEST_F(RegistryBuildCostEstimateTest, TakesAHostBuiltFormatsCalibratedRateOverTheDefault) {
  // Calibration timed format 8's build (EHYB's METIS: 350 ns a nonzero) and, wrongly for a
  // device-built format, 7's: only a host-built format takes a measured rate.
  const std::vector<HostBuildRate> measured{
      {.format = FormatId{8}, .ns_per_nonzero = 350.0, .ns_per_device_byte = 35.0, .sample_nonzeros = 1 << 24},
      {.format = FormatId{7}, .ns_per_nonzero = 90.0, .ns_per_device_byte = 9.0, .sample_nonzeros = 1 << 24}};
  const RegistryBuildCostEstimate estimate(registry, options, 2'000'000, nullptr, measured);
  EXPECT_DOUBLE_EQ(estimate.build_ms(on_host), 700.0);  // 350 ns x 2M nonzeros
  EXPECT_DOUBLE_EQ(estimate.build_ms(on_device), 1.0);
  const RegistryBuildCostEstimate untimed(registry, options, 2'000'000, nullptr);
  EXPECT_DOUBLE_EQ(untimed.build_ms(on_host), 40.0);  // not timed: the default
  options.host_build_ns_per_nonzero = 0.0;  // the charge switched off stays off
  EXPECT_DOUBLE_EQ(estimate.build_ms(on_host), 0.0);
}

// With the matrix's features a host-built candidate costs at least its device bytes at its
// format's rate a byte: a layout padded far beyond its nonzeros (BCE's blocks padded to their
// longest row) is priced by its bytes. Format 8 leaves 100 bytes here; in `padded_registry`
// 100 MB.
TEST_F(RegistryBuildCostEstimateTest, PricesAPaddedHostLayoutByItsDeviceBytes) {
  FormatRegistry padded_registry;
  padded_registry.add(std::make_unique<FixedRules>(8, true, 100'000'000), never_built,
                      /*builds_on_device=*/false);
  const std::vector<HostBuildRate> measured{
      {.format = FormatId{8}, .ns_per_nonzero = 10.0, .ns_per_device_byte = 0.8, .sample_nonzeros = 1 << 22}};
  const MatrixFeatures features{.rows = 100'000, .cols = 100'000, .nnz = 2'000'000};
  const RegistryBuildCostEstimate dense(registry, options, features.nnz, nullptr, measured,
                                        &features, Precision::fp64);
  const RegistryBuildCostEstimate padded(padded_registry, options, features.nnz, nullptr, measured,
                                         &features, Precision::fp64);
  EXPECT_DOUBLE_EQ(dense.build_ms(on_host), 20.0);   // 10 ns x 2M nonzeros > 0.8 ns x 100 B
  EXPECT_DOUBLE_EQ(padded.build_ms(on_host), 80.0);  // 0.8 ns x 100 MB > 10 ns x 2M
  EXPECT_DOUBLE_EQ(padded.format_build_ms(padded_registry.find(FormatId{8})), 20.0)
      << "a format's estimate before its candidates exist is by its nonzeros";
  const RegistryBuildCostEstimate without_features(padded_registry, options, features.nnz,
                                                   nullptr, measured);
  EXPECT_DOUBLE_EQ(without_features.build_ms(on_host), 20.0);
}

}  // namespace spmvd

namespace spmvd {
namespace {

// A tuning that waits for the device lock while another request holds it (a multiply of
// another matrix) does not count the wait as its own cost: it is reported apart.
TEST(DeviceCandidateTimer, KeepsDeviceLockWaitsOutOfTheBuildAndRunCosts) {
  const auto device = make_cpu_device();
  const CsrMatrix<double> m{3, 3, {0, 2, 2, 3}, {0, 2, 1}, {1.0, 2.5, -4.0}};
  const BuildSource source(m, *device);
  std::mutex device_mutex;
  DeviceCandidateTimer timer(format_registry(), source, Precision::fp64, &device_mutex);
  Candidate cpu_csr;
  cpu_csr.format = FormatId{1};  // cpu_csr: builds and runs on the CPU device

  std::unique_lock held(device_mutex);
  std::promise<void> started;
  std::future<CandidateTiming> timing = std::async(std::launch::async, [&] {
    started.set_value();
    return timer.measure(cpu_csr, RunCounts{.warmup = 1, .timed = 3});
  });
  started.get_future().wait();
  const auto hold_start = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(std::chrono::milliseconds(60));
  held.unlock();
  const CandidateTiming t = timing.get();
  const double held_ms = std::chrono::duration<double, std::milli>(
                             std::chrono::steady_clock::now() - hold_start)
                             .count();

  ASSERT_TRUE(t.median_ms.has_value()) << t.failure;
  // The measure call began before the hold's clock started, so it waited about as long.
  EXPECT_GE(t.waited_ms, 30.0);
  EXPECT_LE(t.waited_ms, held_ms + 1000.0);
  // A 3 x 3 CPU build and four runs take microseconds; what is left of the 60 ms is the wait.
  EXPECT_LT(t.build_ms + t.measure_ms, 30.0);
}


// A format whose build has a host phase (without_device_lock) during which "a multiply of
// another matrix" takes the device lock and keeps it 60 ms, then builds cpu_csr.
struct HostPhaseProbe {
  std::mutex* device_mutex = nullptr;
  bool multiply_ran_during_host_phase = false;
  std::future<void> multiply;
};
HostPhaseProbe* host_phase_probe = nullptr;

std::unique_ptr<SpmvOperator> build_with_host_phase(const BuildSource& source, Precision precision,
                                                    const Candidate&) {
  without_device_lock([] {
    HostPhaseProbe& probe = *host_phase_probe;
    auto locked = std::make_shared<std::promise<void>>();
    std::future<void> has_lock = locked->get_future();
    probe.multiply = std::async(std::launch::async, [&probe, locked] {
      const std::lock_guard multiply(*probe.device_mutex);
      locked->set_value();
      std::this_thread::sleep_for(std::chrono::milliseconds(60));
    });
    probe.multiply_ran_during_host_phase =
        has_lock.wait_for(std::chrono::seconds(5)) == std::future_status::ready;
  });
  Candidate csr;
  csr.format = FormatId{1};
  return CpuCsrRules::build(source, precision, csr);
}

// The tuner's build holds the device lock but for its host phase: a multiply of another matrix
// runs meanwhile, and the build's wait to take the lock back is not its cost.
TEST(DeviceCandidateTimer, ReleasesTheDeviceLockForABuildsHostPhase) {
  const auto device = make_cpu_device();
  const CsrMatrix<double> m{3, 3, {0, 2, 2, 3}, {0, 2, 1}, {1.0, 2.5, -4.0}};
  const BuildSource source(m, *device);
  std::mutex device_mutex;
  FormatRegistry registry;
  registry.add(std::make_unique<FixedRules>(30, false, 100), build_with_host_phase);
  HostPhaseProbe probe{.device_mutex = &device_mutex};
  host_phase_probe = &probe;
  DeviceCandidateTimer timer(registry, source, Precision::fp64, &device_mutex);
  const CandidateTiming t = timer.measure(candidate(30, 128), RunCounts{.warmup = 1, .timed = 3});
  probe.multiply.get();
  host_phase_probe = nullptr;

  ASSERT_TRUE(t.median_ms.has_value()) << t.failure;
  EXPECT_TRUE(probe.multiply_ran_during_host_phase)
      << "the build held the device lock through its host phase";
  // Taking the lock back waited for most of the multiply's 60 ms: a wait, not build cost.
  EXPECT_GE(t.waited_ms, 30.0);
  EXPECT_LT(t.build_ms, 30.0);
}


// An operator that records the x and y it is given (host memory on the CPU device) and then
// scribbles over x, so that a run that finds x intact shows it was written afresh.
template <typename Value>
class RecordingOperator final : public SpmvOperator {
 public:
  RecordingOperator(std::size_t cols, std::size_t rows) : cols_(cols), rows_(rows) {}
  void apply(const void* x, void* y, double, double) override {
    const auto* xv = static_cast<const Value*>(x);
    xs_seen.emplace_back(xv, xv + cols_);
    x_pointer = x;
    y_pointer = y;
    std::memset(const_cast<void*>(x), 0, cols_ * sizeof(Value));
    std::memset(y, 0, rows_ * sizeof(Value));
  }
  Precision precision() const noexcept override { return precision_of<Value>(); }
  std::size_t device_bytes() const noexcept override { return 0; }

  std::vector<std::vector<Value>> xs_seen;
  const void* x_pointer = nullptr;
  void* y_pointer = nullptr;

 private:
  std::size_t cols_, rows_;
};

// The timer's set-up is one allocation (x's pristine copy, x and y carved out of it) and no
// upload: its x is hashed on the device, the values the timer has always used (hashed_uniform
// with seed 0x5eed, rounded to the precision), and it is written afresh before every run.
template <typename Value>
void expect_timer_runs_on_the_hashed_x_from_one_allocation() {
  testing::CountingDevice device(make_cpu_device());
  const CsrMatrix<double> m{3, 5, {0, 2, 2, 3}, {0, 4, 1}, {1.0, 2.5, -4.0}};
  const BuildSource source(m, device);
  DeviceCandidateTimer timer(format_registry(), source, precision_of<Value>());
  EXPECT_EQ(device.allocations, 1);
  EXPECT_EQ(device.uploaded_bytes, 0U);

  Candidate cpu_csr;
  cpu_csr.format = FormatId{1};
  RecordingOperator<Value> op(5, 3);
  timer.reuse_build(cpu_csr, &op);
  const CandidateTiming t = timer.measure(cpu_csr, RunCounts{.warmup = 1, .timed = 3});
  ASSERT_TRUE(t.median_ms.has_value()) << t.failure;
  EXPECT_EQ(device.allocations, 1);  // the reused build allocates nothing either
  EXPECT_EQ(device.uploaded_bytes, 0U);

  ASSERT_EQ(op.xs_seen.size(), 4U);  // one warm-up, three timed
  for (std::size_t run = 0; run < op.xs_seen.size(); ++run) {
    for (std::size_t i = 0; i < 5; ++i) {
      const auto expected = static_cast<Value>(hashed_uniform(0x5eed, i));
      EXPECT_EQ(std::memcmp(&op.xs_seen[run][i], &expected, sizeof(Value)), 0)
          << "run " << run << ", entry " << i << ": " << op.xs_seen[run][i] << " != " << expected;
    }
  }
  // y follows x at the next multiple of the device alignment.
  const auto x_address = reinterpret_cast<std::uintptr_t>(op.x_pointer);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(op.y_pointer) - x_address,
            round_up_to_device_alignment(5 * sizeof(Value)));
}

TEST(DeviceCandidateTimer, SetsUpWithOneAllocationAndNoUploadAndRunsOnTheHashedXInDouble) {
  expect_timer_runs_on_the_hashed_x_from_one_allocation<double>();
}

TEST(DeviceCandidateTimer, SetsUpWithOneAllocationAndNoUploadAndRunsOnTheHashedXInFloat) {
  expect_timer_runs_on_the_hashed_x_from_one_allocation<float>();
}

}  // namespace
}  // namespace spmvd
