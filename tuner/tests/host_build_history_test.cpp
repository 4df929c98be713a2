#include "tuner/host_build_history.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <map>
#include <memory>

#include "core/error.hpp"
#include "kernels/device.hpp"
#include "kernels/format_registry.hpp"
#include "kernels/formats/cpu_csr/cpu_csr_rules.hpp"
#include "kernels/formats/cusparse_csr/cusparse_csr_rules.hpp"
#include "tuner/feature_extraction.hpp"
#include "tuner/tuner.hpp"

namespace spmvd {
namespace {

TEST(HostBuildHistory, IsTheMedianOfEachFormatsLastTuningsRatios) {
  HostBuildHistory history;
  const FormatId bce{14}, ehyb{20};
  EXPECT_DOUBLE_EQ(history.factor(bce), 1.0);  // nothing recorded: the calibrated estimate
  history.record(bce, 3.0);
  history.record(bce, 1.5);
  EXPECT_DOUBLE_EQ(history.factor(bce), 2.25);  // an even count: the middle two's mean
  history.record(bce, 2.0);
  EXPECT_DOUBLE_EQ(history.factor(bce), 2.0);
  EXPECT_DOUBLE_EQ(history.factor(ehyb), 1.0);  // per format
  // Nothing that is not a ratio of two positive times.
  history.record(ehyb, 0.0);
  history.record(ehyb, -1.0);
  history.record(ehyb, std::numeric_limits<double>::infinity());
  history.record(ehyb, std::numeric_limits<double>::quiet_NaN());
  EXPECT_DOUBLE_EQ(history.factor(ehyb), 1.0);
  // The last kMaxTunings only: as many builds at 0.5 push the older ratios out.
  for (std::size_t i = 0; i < HostBuildHistory::kMaxTunings; ++i) history.record(bce, 0.5);
  EXPECT_DOUBLE_EQ(history.factor(bce), 0.5);
  history.clear();
  EXPECT_DOUBLE_EQ(history.factor(bce), 1.0);
}

std::unique_ptr<SpmvOperator> not_built(const BuildSource&, Precision, const Candidate&) {
  throw Error(ErrorCode::internal, "the estimate builds nothing");
}

// A host-built format's estimate is the calibrated one times the history's factor; a
// device-built format's is not scaled; calibrated_build_ms is the estimate without the factor
// (what a ratio is taken against, so that factors do not compound).
TEST(HostBuildHistory, ScalesTheEstimatesOfHostBuiltFormatsOnly) {
  FormatRegistry registry;
  registry.add(std::make_unique<CpuCsrRules>(), not_built, /*builds_on_device=*/false);
  registry.add(std::make_unique<CusparseCsrRules>(), not_built, /*builds_on_device=*/true);
  TunerOptions options;
  options.host_build_ns_per_nonzero = 20.0;
  options.device_build_ns_per_nonzero = 0.5;
  HostBuildHistory history;
  history.record(kCpuCsrFormatId, 2.5);
  history.record(kCusparseCsrFormatId, 4.0);  // recorded, but a device build is not scaled
  const Candidate host{.format = kCpuCsrFormatId, .params = {}, .launch = {}};
  const Candidate device{.format = kCusparseCsrFormatId, .params = {}, .launch = {}};
  const RegistryBuildCostEstimate estimate(registry, options, 1'000'000, nullptr, {}, nullptr,
                                           Precision::fp64, &history);
  EXPECT_DOUBLE_EQ(estimate.build_ms(host), 50.0);  // 20 ns x 1M nonzeros x 2.5
  EXPECT_DOUBLE_EQ(estimate.calibrated_build_ms(host), 20.0);
  EXPECT_DOUBLE_EQ(estimate.format_build_ms(registry.find(kCpuCsrFormatId)), 50.0);
  EXPECT_DOUBLE_EQ(estimate.build_ms(device), 0.5);
  const RegistryBuildCostEstimate without(registry, options, 1'000'000, nullptr);
  EXPECT_DOUBLE_EQ(without.build_ms(host), 20.0);
}

CsrMatrix<double> five_point(std::int64_t n) {
  CsrMatrix<double> m;
  m.rows = m.cols = n * n;
  m.row_offsets = {0};
  for (std::int64_t i = 0; i < n; ++i) {
    for (std::int64_t j = 0; j < n; ++j) {
      const std::int64_t r = i * n + j;
      for (const std::int64_t c : {r - n, r - 1, r, r + 1, r + n}) {
        if (c < 0 || c >= m.cols || (c == r - 1 && j == 0) || (c == r + 1 && j == n - 1)) continue;
        m.col_indices.push_back(static_cast<ColIndex>(c));
        m.values.push_back(c == r ? 4.0 : -1.0);
      }
      m.row_offsets.push_back(m.nnz());
    }
  }
  return m;
}

// A tuning records, per host-built format it built, its slowest build over the calibrated
// estimate: on the CPU device every format is built on the host (CPU CSR, CPU COO).
TEST(HostBuildHistory, ATuningRecordsItsSlowestBuildOfEachHostBuiltFormat) {
  const auto device = make_cpu_device();
  const CsrMatrix<double> m = five_point(300);
  const MatrixFeatures f = extract_features(m);
  const FormatRegistry& registry = format_registry();
  TunerOptions options;
  options.mode = TuneMode::exhaustive;
  options.warmup_runs = 1;
  options.timed_runs = 2;
  options.memory_budget_bytes = 1 << 30;
  HostBuildHistory history;
  const TunedPlan tuned = tune_matrix(registry, *device, m, f, Precision::fp64, options, nullptr,
                                      {}, nullptr, nullptr, nullptr, &history);
  const RegistryBuildCostEstimate calibrated(registry, options, f.nnz, nullptr, {}, &f,
                                             Precision::fp64);
  std::map<FormatId, double> slowest;
  for (const MeasuredCandidate& c : tuned.measurements) {
    const FormatEntry* entry = registry.find(c.candidate.format);
    ASSERT_NE(entry, nullptr);
    if (entry->builds_on_device) continue;
    double& ratio = slowest[c.candidate.format];
    ratio = std::max(ratio, c.build_ms / calibrated.calibrated_build_ms(c.candidate));
  }
  ASSERT_FALSE(slowest.empty()) << "no host-built format was measured";
  for (const auto& [format, ratio] : slowest) {
    SCOPED_TRACE("format " + std::to_string(format.value));
    ASSERT_GT(ratio, 0.0);
    EXPECT_DOUBLE_EQ(history.factor(format), ratio);  // one tuning: its one ratio
  }
}

}  // namespace
}  // namespace spmvd
