// The CPU-GPU split on the GPU (label `gpu`: skips visibly without a CUDA device), beyond the
// registry-wide conformance: its asynchronous apply (a second stream and a host function) kept
// in order across back-to-back applies and under the device's timing hold, and the split
// serving a matrix whose CSR exceeds the memory budget (paper 000/003's motivation).

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <random>
#include <set>

#include "kernels/device.hpp"
#include "kernels/format_registry.hpp"
#include "kernels/formats/cpu_gpu_split/cpu_gpu_split_rules.hpp"
#include "kernels/formats/cuda_csr_vector/cuda_csr_vector_rules.hpp"
#include "tuner/feature_extraction.hpp"
#include "tuner/tuner.hpp"

namespace spmvd {
namespace {

// rows rows of 8..24 entries, every 97th row 400 long, every 11th empty.
CsrMatrix<double> power_law_like(std::int64_t rows, std::int64_t cols, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> length_of(8, 24);
  std::uniform_int_distribution<ColIndex> column_of(0, static_cast<ColIndex>(cols - 1));
  std::uniform_real_distribution<double> value_of(-1.0, 1.0);
  CsrMatrix<double> m;
  m.rows = rows;
  m.cols = cols;
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::int64_t length = r % 11 == 0 ? 0 : r % 97 == 0 ? 400 : length_of(rng);
    std::set<ColIndex> columns;
    while (static_cast<std::int64_t>(columns.size()) < length) columns.insert(column_of(rng));
    for (const ColIndex c : columns) {
      m.col_indices.push_back(c);
      m.values.push_back(value_of(rng));
    }
    m.row_offsets.push_back(static_cast<RowOffset>(m.col_indices.size()));
  }
  return m;
}

std::vector<double> random_vector(std::int64_t n, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> value_of(-1.0, 1.0);
  std::vector<double> v(static_cast<std::size_t>(n));
  for (double& x : v) x = value_of(rng);
  return v;
}

void expect_near_reference(const std::vector<double>& got, const std::vector<double>& expected) {
  ASSERT_EQ(got.size(), expected.size());
  std::size_t mismatches = 0;
  for (std::size_t r = 0; r < got.size(); ++r)
    if (!(std::abs(got[r] - expected[r]) <= 1e-10 * (1.0 + std::abs(expected[r]))) &&
        mismatches++ < 5)
      ADD_FAILURE() << "row " << r << ": got " << got[r] << ", expected " << expected[r];
  EXPECT_EQ(mismatches, 0U);
}

class CpuGpuSplitOnGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device visible";
    device_ = make_cuda_device(0);
  }
  std::unique_ptr<Device> device_;
};

TEST_F(CpuGpuSplitOnGpu, KeepsBackToBackAppliesInOrderAndRunsUnderTheTimingHold) {
  const std::uint64_t seed = 1503;
  std::cout << "cpu_gpu_split gpu test: seed " << seed << "\n";
  const CsrMatrix<double> m = power_law_like(50000, 60000, seed);
  std::mt19937_64 rng(seed);
  const FormatEntry* entry = format_registry().find(kCpuGpuSplitFormatId);
  ASSERT_NE(entry, nullptr);
  const Candidate candidate = CpuGpuSplitRules::candidate_for(12, 256, m.rows, device_->info());
  const auto op = entry->build(m, Precision::fp64, candidate, *device_);
  const std::vector<double> x1 = random_vector(m.cols, rng), x2 = random_vector(m.cols, rng);
  const DeviceBuffer x1_device = upload(*device_, x1.data(), x1.size());
  const DeviceBuffer x2_device = upload(*device_, x2.data(), x2.size());
  const std::size_t y_bytes = static_cast<std::size_t>(m.rows) * sizeof(double);
  DeviceBuffer y_device(*device_, y_bytes);
  std::vector<double> y(static_cast<std::size_t>(m.rows));

  // y = A x1 (into NaN), then y = 2 A x2 + y, issued without waiting: the second apply's x copy
  // and host part must follow the first's add.
  device_->fill_bytes(y_device.data(), 0xFF, y_bytes);
  op->apply(x1_device.data(), y_device.data(), 1.0, 0.0);
  op->apply(x2_device.data(), y_device.data(), 2.0, 1.0);
  device_->synchronize();
  device_->copy_to_host(y.data(), y_device.data(), y_bytes);
  std::vector<double> expected(y.size(), 0.0);
  reference_spmv(m, x1.data(), expected.data(), 1.0, 0.0);
  reference_spmv(m, x2.data(), expected.data(), 2.0, 1.0);
  expect_near_reference(y, expected);

  // Device::time_ms holds the stream while the work is issued: apply must not wait on the host.
  const double ms = device_->time_ms([&] { op->apply(x1_device.data(), y_device.data(), 1.0, 0.0); });
  // Not a speed check: were apply to wait on the host behind the hold, the hold would time out
  // (10 ms) and the device would log "timed work waited for the host behind the stream hold".
  std::cout << "one timed apply: " << ms << " ms\n";
  device_->copy_to_host(y.data(), y_device.data(), y_bytes);
  std::fill(expected.begin(), expected.end(), 0.0);
  reference_spmv(m, x1.data(), expected.data(), 1.0, 0.0);
  expect_near_reference(y, expected);
}

TEST_F(CpuGpuSplitOnGpu, ServesAMatrixWhoseCsrExceedsTheMemoryBudget) {
  const CsrMatrix<double> m = power_law_like(400000, 400000, 77);
  const MatrixFeatures features = extract_features(m);
  const Candidate csr_candidate{.format = kCudaCsrVectorFormatId, .params = {}, .launch = {}};
  const std::uint64_t csr_bytes =
      CudaCsrVectorRules{}.device_bytes(features, Precision::fp64, csr_candidate);
  const std::uint64_t budget = csr_bytes / 3;
  TunerOptions options;
  options.warmup_runs = 1;
  options.timed_runs = 3;
  options.memory_budget_bytes = budget;
  const Plan plan =
      tune_matrix(format_registry(), *device_, m, features, Precision::fp64, options, nullptr).plan;
  std::cout << "CSR needs " << csr_bytes << " B, budget " << budget << " B: tuned to "
            << plan.format_name << " " << to_string(plan.params) << ", " << plan.measured_ms
            << " ms, " << plan.candidates_measured << " candidates measured\n";
  ASSERT_EQ(plan.format, kCpuGpuSplitFormatId) << "only the split's GPU part fits";
  const Candidate chosen{.format = plan.format, .params = plan.params, .launch = plan.launch};
  const auto op = format_registry().find(plan.format)->build(m, Precision::fp64, chosen, *device_);
  EXPECT_LE(op->device_bytes(), budget);
  std::mt19937_64 rng(77);
  const std::vector<double> x = random_vector(m.cols, rng);
  const DeviceBuffer x_device = upload(*device_, x.data(), x.size());
  DeviceBuffer y_device(*device_, static_cast<std::size_t>(m.rows) * sizeof(double));
  op->apply(x_device.data(), y_device.data(), 1.0, 0.0);
  std::vector<double> y(static_cast<std::size_t>(m.rows)), expected(y.size(), 0.0);
  device_->synchronize();
  device_->copy_to_host(y.data(), y_device.data(), y.size() * sizeof(double));
  reference_spmv(m, x.data(), expected.data(), 1.0, 0.0);
  expect_near_reference(y, expected);
}

}  // namespace
}  // namespace spmvd
