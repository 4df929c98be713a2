// A composed format (kernels/format_parts.hpp) is predicted as its parts: the GPU parts one
// after another, the host parts beside them.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/field_set.hpp"
#include "core/part_features.hpp"
#include "kernels/format_registry.hpp"
#include "kernels/formats/cpu_coo/cpu_coo_rules.hpp"
#include "kernels/formats/cuda_csr_vector/cuda_csr_vector_rules.hpp"
#include "models/families/bytes/bytes_record.hpp"
#include "models/families/cpu_gpu/cpu_gpu_record.hpp"
#include "models/locality.hpp"
#include "models/model_predictor.hpp"
#include "models/part_time_predictor.hpp"
#include "models/tests/test_device.hpp"

namespace spmvd {
namespace {

using testing_support::h100_like;

Candidate csr_vector_candidate(std::uint32_t threads_per_row) {
  Candidate c;
  c.format = kCudaCsrVectorFormatId;
  c.launch.block_size = 256;
  c.launch.threads_per_row = threads_per_row;
  return c;
}

MatrixFeatures whole_matrix() {
  MatrixFeatures f = part_features(MatrixFeatures{.cols = 100000}, {{4, 90000}, {64, 10000}});
  f.x_sectors_per_nonzero = 1.0;
  return f;
}

// Long rows as CSR vector with 32 lanes a row, short ones with 4; optionally the long rows'
// tail on the host, or the two GPU parts in one launch (as BCE's blocks share one).
class TwoPartRules final : public FormatRules {
 public:
  explicit TwoPartRules(bool with_host_part, int gpu_launch = kOwnLaunch)
      : with_host_part_(with_host_part), gpu_launch_(gpu_launch) {}
  FormatId id() const noexcept override { return FormatId{60001}; }
  std::string_view name() const noexcept override { return "two_parts"; }
  bool needs_gpu() const noexcept override { return true; }
  std::string_view model_family() const noexcept override { return "bytes"; }
  bool admissible(const MatrixFeatures&, const DeviceInfo&, Precision,
                  std::uint64_t) const override {
    return true;
  }
  std::vector<Candidate> candidates(const MatrixFeatures&, const DeviceInfo&) const override {
    return {Candidate{.format = id(), .params = {}, .launch = {}}};
  }
  std::uint64_t device_bytes(const MatrixFeatures&, Precision, const Candidate&) const override {
    return 0;
  }
  std::vector<FormatPart> parts(const MatrixFeatures& f, const Candidate&) const override {
    std::vector<FormatPart> out{
        {.runs = FormatPart::Runs::gpu,
         .features = part_features(f, {{4, 90000}}),
         .candidate = csr_vector_candidate(4),
         .launch = gpu_launch_},
        {.runs = FormatPart::Runs::gpu,
         .features = part_features(f, {{64, 10000}}),
         .candidate = csr_vector_candidate(32),
         .launch = gpu_launch_}};
    if (with_host_part_)
      out.push_back({.runs = FormatPart::Runs::host,
                     .features = part_features(f, {{1000, 1000}}),
                     .candidate = Candidate{.format = kCpuCooFormatId, .params = {}, .launch = {}}});
    return out;
  }

 private:
  bool with_host_part_;
  int gpu_launch_;
};

ModelSet bytes_only_set() {
  ModelSet set;
  set.records.update<BytesRecord>([&](BytesRecord& r) {
    r.shared = BytesCalibration{
        .time_vs_bytes = {.intercept = 0.005,
                          .slope = 1.0 / 3e9,
                          .quality = {.sample_count = 10, .x_min = 1e6, .x_max = 1e10}}};
  });
  return set;
}

TEST(ComposedPrediction, SumsTheGpuPartsEachPredictedAsItsOwnFormat) {
  const ModelPredictor predictor(bytes_only_set());
  const DeviceInfo device = h100_like();
  const TwoPartRules rules(false);
  const MatrixFeatures f = whole_matrix();
  const Candidate candidate = rules.candidates(f, device).front();
  const CudaCsrVectorRules csr_vector;
  double expected = 0.0;
  for (const FormatPart& part : rules.parts(f, candidate))
    expected += predictor
                    .predict_ms(csr_vector, part.features, part.candidate, device,
                                csr_vector.device_bytes(part.features, Precision::fp64,
                                                        part.candidate))
                    .ms;
  const Prediction p = predictor.predict_ms(rules, f, candidate, device);
  EXPECT_DOUBLE_EQ(p.ms, expected);
  EXPECT_TRUE(p.includes_fixed_cost);
}

TEST(ComposedPrediction, AHostPartRunsBesideTheGpuParts) {
  ModelSet set = bytes_only_set();
  // 1000 * 1000 non-zeros at 2 operations each over 15 working cores of 1e5 operations/ms.
  set.records.put(CpuGpuTimeCoefficients{.cpu_cores = 16, .cpu_operations_per_ms = 1e5});
  const ModelPredictor predictor(set);
  const DeviceInfo device = h100_like();
  const MatrixFeatures f = whole_matrix();
  const TwoPartRules gpu_only(false);
  const TwoPartRules with_host(true);
  const Candidate candidate = gpu_only.candidates(f, device).front();
  const double gpu_ms = predictor.predict_ms(gpu_only, f, candidate, device).ms;
  const double host_ms = 2.0 * 1e6 / 1e5 / 15.0;
  ASSERT_GT(host_ms, gpu_ms) << "the test wants the host part to be the longer";
  EXPECT_DOUBLE_EQ(predictor.predict_ms(with_host, f, candidate, device).ms, host_ms);
}

// Issue 15: a host part's copies (x down, its rows of y up) cost kHostPartCopies latencies
// plus their bytes at the calibrated bandwidth, sized by the set's precision.
TEST(ComposedPrediction, AHostPartPaysItsCopiesAtTheCalibratedBandwidth) {
  ModelSet set = bytes_only_set();
  set.precision = Precision::fp32;
  set.records.put(CpuGpuTimeCoefficients{.cpu_cores = 16,
                                         .cpu_operations_per_ms = 1e5,
                                         .host_device_bytes_per_ms = 2e7,
                                         .host_device_copy_latency_ms = 0.01});
  const ModelPredictor predictor(set);
  const DeviceInfo device = h100_like();
  const ModelPartTimePredictor parts(predictor, format_registry(), device);
  FormatPart host{.runs = FormatPart::Runs::host,
                  .features = part_features(whole_matrix(), {{10, 500}}),
                  .candidate = Candidate{.format = kCpuCooFormatId, .params = {}, .launch = {}},
                  .transfer_values = 100000 + 500};
  const double compute_ms = 2.0 * 5000 / 1e5 / 15.0;  // Eq. 6
  const double copies_ms = 2 * 0.01 + (100500.0 * 4) / 2e7;
  ASSERT_TRUE(parts.part_ms(host).has_value());
  EXPECT_DOUBLE_EQ(*parts.part_ms(host), compute_ms + copies_ms);
  // Without a measured bandwidth the copies cannot be priced: no prediction, not a free copy.
  set.records.update<CpuGpuTimeCoefficients>(
      [](CpuGpuTimeCoefficients& c) { c.host_device_bytes_per_ms = 0.0; });
  const ModelPredictor uncalibrated(set);
  const ModelPartTimePredictor no_bandwidth(uncalibrated, format_registry(), device);
  EXPECT_FALSE(no_bandwidth.part_ms(host).has_value());
  host.transfer_values = 0;
  EXPECT_DOUBLE_EQ(*no_bandwidth.part_ms(host), compute_ms);
}

// The host's locality term: Eq. 6 at the random samples' fc times rho + (1 - rho) w, w the
// part's x_gather_randomness (the whole matrix's sectors per non-zero at the part's row length).
TEST(ComposedPrediction, AHostPartOfABandTakesTheBandedRatioOfARandomOnesTime) {
  ModelSet set = bytes_only_set();
  CpuGpuTimeCoefficients c{.cpu_cores = 16, .cpu_operations_per_ms = 1e5};
  c.cpu_banded_ratio = 0.3;
  set.records.put(c);
  const DeviceInfo device = h100_like();
  const auto host_part = [](double x_sectors_per_nonzero) {
    MatrixFeatures whole = whole_matrix();
    whole.x_sectors_per_nonzero = x_sectors_per_nonzero;
    return FormatPart{
        .runs = FormatPart::Runs::host,
        .features = part_features(whole, {{10, 500}}),
        .candidate = Candidate{.format = kCpuCooFormatId, .params = {}, .launch = {}}};
  };
  // A band of rows of 10 touches its sectors once per group (randomness 0); one sector per
  // non-zero is at least what 10 random columns of 100000 touch (randomness 1).
  const FormatPart banded = host_part(banded_sectors_per_nonzero(10.0));
  const FormatPart random = host_part(1.0);
  ASSERT_DOUBLE_EQ(x_gather_randomness(banded.features), 0.0);
  ASSERT_DOUBLE_EQ(x_gather_randomness(random.features), 1.0);
  const double random_ms = 2.0 * 5000 / 1e5 / 15.0;  // Eq. 6 at fc
  const ModelPredictor predictor(set);
  const ModelPartTimePredictor parts(predictor, format_registry(), device);
  EXPECT_DOUBLE_EQ(*parts.part_ms(random), random_ms);
  EXPECT_DOUBLE_EQ(*parts.part_ms(banded), 0.3 * random_ms);
  // Halfway between the two: halfway between the times.
  const FormatPart between = host_part(0.5 * (banded_sectors_per_nonzero(10.0) + 1.0));
  const double w = x_gather_randomness(between.features);
  EXPECT_GT(w, 0.0);
  EXPECT_LT(w, 1.0);
  EXPECT_DOUBLE_EQ(*parts.part_ms(between), (0.3 + 0.7 * w) * random_ms);
  // The locality step switched off (an ablation): every host part at the random rate.
  const std::vector<std::string> without{"locality"};
  const ModelPredictor no_locality(set, without);
  const ModelPartTimePredictor random_rate(no_locality, format_registry(), device);
  EXPECT_DOUBLE_EQ(*random_rate.part_ms(banded), random_ms);
}

// A host part beside a GPU (it moves values over PCIe) pays the host path's round trip once a
// multiply, on top of Eq. 6 and its copies; one that moves nothing (the CPU device) does not.
TEST(ComposedPrediction, AHostPartBesideAGpuPaysTheHostPathsRoundTrip) {
  ModelSet set = bytes_only_set();
  const CpuGpuTimeCoefficients c{.cpu_cores = 16,
                                 .cpu_operations_per_ms = 1e5,
                                 .host_device_bytes_per_ms = 5e7,
                                 .host_device_copy_latency_ms = 0.004,
                                 .host_round_trip_ms = 0.3};
  set.records.put(c);
  const DeviceInfo device = h100_like();
  FormatPart part{.runs = FormatPart::Runs::host,
                  .features = part_features(whole_matrix(), {{10, 500}}),
                  .candidate = Candidate{.format = kCpuCooFormatId, .params = {}, .launch = {}}};
  part.features.x_sectors_per_nonzero = 1.0;  // random columns: Eq. 6 at fc itself
  const ModelPredictor predictor(set);
  const ModelPartTimePredictor parts(predictor, format_registry(), device);
  const double eq6_ms = 2.0 * 5000 / 1e5 / 15.0;
  EXPECT_DOUBLE_EQ(*parts.part_ms(part), eq6_ms);
  part.transfer_values = 100'000 + 500;  // x down, the touched rows up
  const double copies_ms = 2 * 0.004 + (100'500.0 * 8) / 5e7;
  EXPECT_NEAR(*parts.part_ms(part), eq6_ms + copies_ms + 0.3, 1e-12);
  // Each of its 500 touched rows' own cost, moved from 16 to 15 threads as Eq. 6 is.
  set.records.update<CpuGpuTimeCoefficients>([](CpuGpuTimeCoefficients& k) { k.cpu_ms_per_row = 1e-6; });
  const ModelPredictor with_rows(set);
  const ModelPartTimePredictor row_parts(with_rows, format_registry(), device);
  EXPECT_NEAR(*row_parts.part_ms(part), eq6_ms + copies_ms + 0.3 + 500 * 1e-6 * 16.0 / 15.0, 1e-12);
  // A part of 2 tasks (the split's chunks) runs on 2 of the 15 spare cores: its Eq. 6 and rows
  // take 15 / 2 as long.
  part.host_tasks = 2;
  EXPECT_NEAR(*row_parts.part_ms(part),
              7.5 * (eq6_ms + 500 * 1e-6 * 16.0 / 15.0) + copies_ms + 0.3, 1e-12);
  // With a calibrated wake-up, a part of several tasks pays it once, a part of one does not.
  set.records.update<CpuGpuTimeCoefficients>([](CpuGpuTimeCoefficients& k) { k.host_wake_ms = 0.02; });
  const ModelPredictor with_wake(set);
  const ModelPartTimePredictor wake_parts(with_wake, format_registry(), device);
  EXPECT_NEAR(*wake_parts.part_ms(part),
              7.5 * (eq6_ms + 500 * 1e-6 * 16.0 / 15.0) + copies_ms + 0.3 + 0.02, 1e-12);
  part.host_tasks = 15;
  EXPECT_NEAR(*wake_parts.part_ms(part),
              eq6_ms + 500 * 1e-6 * 16.0 / 15.0 + copies_ms + 0.3 + 0.02, 1e-12);
  part.host_tasks = 1;
  EXPECT_NEAR(*wake_parts.part_ms(part),
              15.0 * (eq6_ms + 500 * 1e-6 * 16.0 / 15.0) + copies_ms + 0.3, 1e-12);
}

// The round trip is what a timed split takes beyond Eq. 6 and its copies (its ELL kernel runs
// beside them), so the sample's own prediction, the slower of its parts, is its time.
TEST(ComposedPrediction, TheRoundTripIsTheSplitsTimeLessWhatTheModelAlreadyCounts) {
  const CpuGpuTimeCoefficients c{.cpu_cores = 16,
                                 .cpu_operations_per_ms = 1e5,
                                 .host_device_bytes_per_ms = 5e7,
                                 .host_device_copy_latency_ms = 0.004};
  const double eq6_ms = 2.0 * 4096 / 1e5 / 15.0;
  const double copies_ms = 2 * 0.004 + 65536.0 / 5e7;
  EXPECT_NEAR(host_round_trip_ms_of(0.5, 4096, 15, 65536, kHostPartCopies, c),
              0.5 - eq6_ms - copies_ms, 1e-12);
  // The sample's host part in one task is one thread's loop: Eq. 6 on 1 core, not 15.
  EXPECT_NEAR(host_round_trip_ms_of(0.5, 4096, 1, 65536, kHostPartCopies, c),
              0.5 - 15.0 * eq6_ms - copies_ms, 1e-12);
  // A split timed faster than the parts the model counts has no round trip left, not a
  // negative one.
  EXPECT_EQ(host_round_trip_ms_of(0.01, 4096, 15, 65536, kHostPartCopies, c), 0.0);

  // The calibration's sample, a one-entry host part beside the whole x: with the round trip
  // fitted from its time, its host part (the slower part) is predicted at that time.
  ModelSet set = bytes_only_set();
  FormatPart sample{.runs = FormatPart::Runs::host,
                    .features = part_features(whole_matrix(), {{1, 1}}),
                    .candidate = Candidate{.format = kCpuCooFormatId, .params = {}, .launch = {}}};
  sample.features.x_sectors_per_nonzero = 1.0;
  sample.transfer_values = static_cast<std::uint64_t>(sample.features.cols) + 1;
  sample.host_tasks = 1;
  const double split_ms = 0.045;
  CpuGpuTimeCoefficients fitted = c;
  fitted.host_round_trip_ms = host_round_trip_ms_of(split_ms, 1, 1, sample.transfer_values * 8,
                                                    kHostPartCopies, c);
  EXPECT_GT(fitted.host_round_trip_ms, 0.0);
  set.records.put(fitted);
  const ModelPredictor predictor(set);
  const ModelPartTimePredictor parts(predictor, format_registry(), h100_like());
  EXPECT_NEAR(*parts.part_ms(sample), split_ms, 1e-12);
}

TEST(ComposedPrediction, SaysWhichPartCannotBePredicted) {
  const ModelPredictor predictor(bytes_only_set());  // no host side calibrated
  const TwoPartRules rules(true);
  const MatrixFeatures f = whole_matrix();
  try {
    predictor.predict_ms(rules, f, rules.candidates(f, h100_like()).front(), h100_like());
    FAIL() << "expected failed_precondition";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::failed_precondition);
    EXPECT_NE(std::string(e.what()).find("two_parts"), std::string::npos) << e.what();
  }
}

// TwoPartRules' two GPU parts, each predicted alone on the bytes-only set at a 4 us launch
// floor; the parts of a shared launch add up (no overlap: ComposedOverlap tests it).
class ComposedTimeOfTwoParts : public ::testing::Test {
 protected:
  static ModelSet floored_set() {
    ModelSet set = bytes_only_set();
    set.launch_floor_ms = 0.004;
    return set;
  }
  inline static const std::vector<std::string> kNoOverlap{"shared_launch_overlap"};
  const ModelPredictor predictor{floored_set(), kNoOverlap};
  const DeviceInfo device = h100_like();
  const ModelPartTimePredictor predict_part{predictor, format_registry(), device};
  std::vector<FormatPart> parts = TwoPartRules(false).parts(whole_matrix(), Candidate{});
  const double first = *predict_part.part_ms(parts[0]);
  const double second = *predict_part.part_ms(parts[1]);
};

// Parts of one launch (BCE's blocks) pay the launch's fixed cost once: the parts' sum less the
// launch floor for every part but one; parts of launches of their own each pay it.
TEST_F(ComposedTimeOfTwoParts, PartsOfOneLaunchPayItsFixedCostOnce) {
  ASSERT_EQ(parts.size(), 2u);
  ASSERT_GT(std::min(first, second), 0.004) << "each part must cost more than the floor";
  EXPECT_DOUBLE_EQ(predict_part.fixed_ms(parts[0]), 0.004);
  EXPECT_DOUBLE_EQ(*composed_time_ms(parts, predict_part), first + second);
  for (FormatPart& part : parts) part.launch = 0;
  EXPECT_DOUBLE_EQ(*composed_time_ms(parts, predict_part), first + second - 0.004);
  EXPECT_DOUBLE_EQ(*part_ms_in_launch(parts[1], predict_part), second - 0.004);
  parts[1].launch = 1;  // two launches again
  EXPECT_DOUBLE_EQ(*composed_time_ms(parts, predict_part), first + second);
}

// A composed format's own launch floor (BCE's tables and rowNo before and after every row)
// replaces the part floor the shared launch pays once where it is larger; a smaller one, or
// parts of launches of their own, change nothing.
TEST_F(ComposedTimeOfTwoParts, ASharedLaunchPaysTheComposedFormatsOwnFloorOnce) {
  for (FormatPart& part : parts) part.launch = 0;
  EXPECT_DOUBLE_EQ(*composed_time_ms(parts, predict_part, 0.006), first + second - 0.004 + 0.002);
  EXPECT_DOUBLE_EQ(*composed_time_ms(parts, predict_part, 0.003), first + second - 0.004);
  parts[1].launch = 1;
  EXPECT_DOUBLE_EQ(*composed_time_ms(parts, predict_part, 0.006), first + second + 0.002 + 0.002)
      << "each shared launch pays the floor once";
  for (FormatPart& part : parts) part.launch = kOwnLaunch;
  EXPECT_DOUBLE_EQ(*composed_time_ms(parts, predict_part, 0.006), first + second);
}

// A part whose format makes a launch alone that the composition does not (BRO-HYB's COO part:
// no y scaling of its own) is its format's time less a launch floor for each, never below one
// floor: its own launch still queues.
TEST_F(ComposedTimeOfTwoParts, APartSkippingItsFormatsLaunchSavesTheLaunchFloor) {
  ASSERT_GT(second, 0.008) << "the part must cost more than two floors";
  parts[1].skipped_launches = 1;
  EXPECT_DOUBLE_EQ(*predict_part.part_ms(parts[1]), second - 0.004);
  EXPECT_DOUBLE_EQ(*composed_time_ms(parts, predict_part), first + second - 0.004);
  parts[1].skipped_launches = 1000;
  EXPECT_DOUBLE_EQ(*predict_part.part_ms(parts[1]), 0.004) << "one launch is left";
}

// The parts of a shared launch run side by side: above its fixed cost the launch takes the
// larger of its slowest part and the GPU time its parts occupy.
TEST(ComposedOverlap, ASharedLaunchTakesItsSlowestPartOrTheGpuTimeItsPartsOccupy) {
  // Hand-written parts of 1 and 2 ms in one launch, each occupying a quarter of its time.
  class QuarterOccupancy final : public PartTimePredictor {
   public:
    std::optional<double> part_ms(const FormatPart& part) const override {
      return static_cast<double>(part.features.rows);
    }
    double occupied_ms(const FormatPart& /*part*/, double ms) const override { return ms / 4; }
  } predictor;
  std::vector<FormatPart> parts(2);
  parts[0].features.rows = 1;
  parts[1].features.rows = 2;
  for (FormatPart& part : parts) part.launch = 0;
  EXPECT_DOUBLE_EQ(*composed_time_ms(parts, predictor), 2.0) << "the slowest part";
  parts.resize(12, parts[1]);  // 11 parts of 2 ms: 5.75 ms of GPU time
  EXPECT_DOUBLE_EQ(*composed_time_ms(parts, predictor), 1.0 / 4 + 11 * 2.0 / 4);
  for (FormatPart& part : parts) part.launch = kOwnLaunch;
  EXPECT_DOUBLE_EQ(*composed_time_ms(parts, predictor), 1.0 + 11 * 2.0) << "own launches add up";
}

// A GPU part occupies its share of the resident threads, or its bytes at the shared DRAM rate,
// whichever is more, and never more than its own time.
TEST(ComposedOverlap, APartOccupiesItsShareOfThreadsOrItsBytesAtTheSharedRate) {
  const ModelPredictor predictor(bytes_only_set());
  const DeviceInfo device = h100_like();  // 132 x 2048 resident threads
  const ModelPartTimePredictor parts(predictor, format_registry(), device);
  FormatPart part{.runs = FormatPart::Runs::gpu,
                  .features = part_features(whole_matrix(), {{1, 100}}),
                  .candidate = csr_vector_candidate(1),
                  .launch = 0};
  part.candidate.launch.grid_size = 132 * 2048 / 4 / 256;  // a quarter of the threads
  EXPECT_NEAR(parts.occupied_ms(part, 1.0), 0.25, 1e-6) << "100 entries: bytes say ~nothing";
  part.candidate.launch.grid_size = 4000;
  EXPECT_DOUBLE_EQ(parts.occupied_ms(part, 1.0), 1.0) << "all of the threads";
  // 64M entries on a quarter of the threads: its bytes at 3e9 bytes a ms (bytes_only_set).
  part.candidate.launch.grid_size = 132 * 2048 / 4 / 256;
  part.features = part_features(whole_matrix(), {{64, 1'000'000}});
  const double bytes_ms = static_cast<double>(CudaCsrVectorRules().streamed_bytes(
                              part.features, predictor.model_set().precision, part.candidate)) /
                          3e9;
  ASSERT_GT(bytes_ms, 0.25);
  EXPECT_DOUBLE_EQ(parts.occupied_ms(part, 1.0), bytes_ms);
  EXPECT_DOUBLE_EQ(parts.occupied_ms(part, 0.1), 0.1) << "never more than its own time";
  // Switched off, or a host part: its whole time.
  const std::vector<std::string> off{"shared_launch_overlap"};
  const ModelPredictor without(bytes_only_set(), off);
  EXPECT_DOUBLE_EQ(ModelPartTimePredictor(without, format_registry(), device).occupied_ms(part, 1.0),
                   1.0);
  part.runs = FormatPart::Runs::host;
  EXPECT_DOUBLE_EQ(parts.occupied_ms(part, 1.0), 1.0);
}

// Parameters of two fields, as BCE's variant and its boundaries.
struct Variant {
  int variant = 0;
  int width = 0;
  static constexpr auto kFields =
      std::tuple{declare_field("variant", &Variant::variant), declare_field("width", &Variant::width)};
  friend bool operator==(const Variant&, const Variant&) = default;
};

// The predictor takes the floor of the candidate's format and parameters from the set (the
// nearest parameters where none match), and --without composed_floor leaves it out.
TEST(ComposedPrediction, TakesTheFormatsMeasuredLaunchFloor) {
  ModelSet set = bytes_only_set();
  set.launch_floor_ms = 0.004;
  set.composed_launch_floors = {
      {.format = FormatId{60001}, .params = FieldSet::of(Variant{0, 1}), .floor_ms = 0.005},
      {.format = FormatId{60001}, .params = FieldSet::of(Variant{1, 1}), .floor_ms = 0.007}};
  const DeviceInfo device = h100_like();
  const TwoPartRules rules(false, /*gpu_launch=*/0);
  const MatrixFeatures f = whole_matrix();
  const Candidate hopper{.format = rules.id(), .params = FieldSet::of(Variant{1, 9}), .launch = {}};
  const double without_floor =
      ModelPredictor(set, std::vector<std::string>{"composed_floor"}).predict_ms(rules, f, hopper, device).ms;
  const ModelPredictor predictor(set);
  EXPECT_DOUBLE_EQ(predictor.predict_ms(rules, f, hopper, device).ms, without_floor + 0.003)
      << "the record sharing the variant, not the width";
  const Candidate exact{.format = rules.id(), .params = FieldSet::of(Variant{0, 1}), .launch = {}};
  EXPECT_DOUBLE_EQ(predictor.predict_ms(rules, f, exact, device).ms, without_floor + 0.001);
  set.composed_launch_floors.clear();
  EXPECT_DOUBLE_EQ(ModelPredictor(set).predict_ms(rules, f, hopper, device).ms, without_floor)
      << "no floor of its format: the part floor";
}

// A part's row blocks take the launch's fixed cost and the wave time of its block size a wave
// of them (one at least), where that is more than its own price; --without row_block_waves, or
// a set without wave times, leaves its own price.
TEST(ComposedPrediction, RowBlocksTakeAWaveTimeAWaveOfThem) {
  ModelSet set = bytes_only_set();
  set.launch_floor_ms = 0.004;
  set.row_block_waves = {{.block_size = 256, .wave_ms = 0.002}};
  const DeviceInfo device = h100_like();
  FormatPart part{.runs = FormatPart::Runs::gpu,
                  .features = part_features(whole_matrix(), {{4, 3000}}),
                  .candidate = csr_vector_candidate(32),
                  .launch = 0};
  const ModelPredictor predictor(set);
  const ModelPartTimePredictor parts(predictor, format_registry(), device);
  const double own = *parts.part_ms(part);
  part.row_blocks = 3000;  // 132 SMs x 8 blocks of 256 threads: 2.84 waves
  const double waves = 3000.0 / (132 * 8);
  ASSERT_LT(own, 0.004 + waves * 0.002) << "the wave time must bind for this test to tell";
  EXPECT_DOUBLE_EQ(*parts.part_ms(part), 0.004 + waves * 0.002);
  EXPECT_DOUBLE_EQ(*part_ms_in_launch(part, parts), waves * 0.002) << "the fixed cost shared";
  part.row_blocks = 10;
  EXPECT_DOUBLE_EQ(*parts.part_ms(part), std::max(own, 0.004 + 0.002)) << "a partial wave: one";
  part.row_blocks = 3000;
  const ModelPredictor without(set, std::vector<std::string>{"row_block_waves"});
  EXPECT_DOUBLE_EQ(*ModelPartTimePredictor(without, format_registry(), device).part_ms(part), own);
  set.row_block_waves.clear();
  const ModelPredictor uncalibrated(set);
  EXPECT_DOUBLE_EQ(*ModelPartTimePredictor(uncalibrated, format_registry(), device).part_ms(part),
                   own);
}

TEST(ComposedTime, RefusesNoParts) {
  const ModelPredictor predictor(bytes_only_set());
  const DeviceInfo device = h100_like();
  const ModelPartTimePredictor parts(predictor, format_registry(), device);
  EXPECT_THROW(composed_time_ms({}, parts), Error);
}

}  // namespace
}  // namespace spmvd
