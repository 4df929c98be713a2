#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <memory>
#include <vector>

#include "core/error.hpp"
#include "kernels/build_source.hpp"
#include "kernels/formats/cpu_csr/cpu_csr_rules.hpp"
#include "kernels/tests/hand_written.hpp"

namespace spmvd {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(CpuCsrRules, CountsOffsetsIndicesAndValues) {
  const CpuCsrRules rules;
  const auto f = testing::features(1000, 1000, 5000);
  const Candidate c{.format = kCpuCsrFormatId, .params = {}, .launch = {}};
  EXPECT_EQ(rules.device_bytes(f, Precision::fp64, c), 1001U * 8 + 5000U * (4 + 8));
  EXPECT_EQ(rules.device_bytes(f, Precision::fp32, c), 1001U * 8 + 5000U * (4 + 4));
}

TEST(CpuCsrRules, IsAdmissibleOnlyOnTheCpuWithinTheBudget) {
  const CpuCsrRules rules;
  const auto f = testing::features(1000, 1000, 5000);
  const std::uint64_t bytes = 1001U * 8 + 5000U * 12;
  EXPECT_TRUE(rules.admissible(f, testing::eight_core_cpu(), Precision::fp64, bytes));
  EXPECT_FALSE(rules.admissible(f, testing::eight_core_cpu(), Precision::fp64, bytes - 1));
  EXPECT_FALSE(rules.admissible(f, testing::h100(), Precision::fp64, std::uint64_t{1} << 40));
}

TEST(CpuCsrRules, ProposesOneCandidateWithoutLaunchParameters) {
  const CpuCsrRules rules;
  const auto space = rules.candidates(testing::features(10, 10, 20), testing::eight_core_cpu());
  ASSERT_EQ(space.size(), 1U);
  EXPECT_EQ(space[0], (Candidate{.format = kCpuCsrFormatId, .params = {}, .launch = {}}));
}

// [1 0 2]   [1]       [ 7]
// [0 0 0] * [2]   =   [ 0]
// [0 3 0]   [3]       [ 6]
CsrMatrix<double> three_by_three() {
  return CsrMatrix<double>{3, 3, {0, 2, 2, 3}, {0, 2, 1}, {1.0, 2.0, 3.0}};
}

const Candidate kCpuCsr{.format = kCpuCsrFormatId, .params = {}, .launch = {}};

TEST(CpuCsrOperator, MultipliesAHandCheckedMatrix) {
  const auto device = make_cpu_device();
  const CsrMatrix<double> m = three_by_three();
  const BuildSource source(m, *device);
  const auto op = CpuCsrRules::build(source, Precision::fp64, kCpuCsr);
  const std::vector<double> x{1.0, 2.0, 3.0};
  std::vector<double> y{10.0, 20.0, 30.0};
  op->apply(x.data(), y.data(), 2.0, 0.5);  // host memory is device memory on the CPU
  EXPECT_THAT(y, ElementsAre(2.0 * 7 + 5.0, 10.0, 2.0 * 6 + 15.0));
  EXPECT_EQ(op->device_bytes(), 4U * 8 + 3U * (4 + 8));
}

TEST(CpuCsrOperator, IgnoresNanInYWhenBetaIsZero) {
  const auto device = make_cpu_device();
  const CsrMatrix<double> m = three_by_three();
  const BuildSource source(m, *device);
  const auto op = CpuCsrRules::build(source, Precision::fp32, kCpuCsr);
  const std::vector<float> x{1.0F, 2.0F, 3.0F};
  std::vector<float> y(3, std::numeric_limits<float>::quiet_NaN());
  op->apply(x.data(), y.data(), 1.0, 0.0);
  EXPECT_THAT(y, ElementsAre(7.0F, 0.0F, 6.0F));
  EXPECT_EQ(op->precision(), Precision::fp32);
}

TEST(CpuCsrOperator, RefusesACandidateOfAnotherFormat) {
  const auto device = make_cpu_device();
  const CsrMatrix<double> m = three_by_three();
  const BuildSource source(m, *device);
  try {
    CpuCsrRules::build(source, Precision::fp64,
                       Candidate{.format = FormatId{2}, .params = {}, .launch = {}});
    FAIL() << "built from another format's candidate";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    EXPECT_THAT(e.what(), HasSubstr("cpu_csr: candidate of format id 2"));
  }
  EXPECT_FALSE(source.has_device_csr(Precision::fp64)) << "uploaded for a refused candidate";
}

TEST(CpuCsrOperator, SharesTheSourcesCsrAndOutlivesTheSource) {
  const auto device = make_cpu_device();
  const CsrMatrix<double> m = three_by_three();
  std::unique_ptr<SpmvOperator> first;
  std::unique_ptr<SpmvOperator> second;
  {
    const BuildSource source(m, *device);
    first = CpuCsrRules::build(source, Precision::fp32, kCpuCsr);
    second = CpuCsrRules::build(source, Precision::fp32, kCpuCsr);
    const auto csr = source.device_csr(Precision::fp32);
    // Both operators multiply over the source's one copy: 2 holders besides this one and the
    // source's own.
    EXPECT_EQ(csr.use_count(), 4);
    EXPECT_EQ(first->device_bytes(), csr->bytes());
  }
  const std::vector<float> x{1.0F, 2.0F, 3.0F};
  std::vector<float> y(3, 0.0F);
  second->apply(x.data(), y.data(), 1.0, 0.0);  // the source is gone; its CSR is not
  EXPECT_THAT(y, ElementsAre(7.0F, 0.0F, 6.0F));
}

}  // namespace
}  // namespace spmvd
