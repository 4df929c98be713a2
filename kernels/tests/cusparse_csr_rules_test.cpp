#include "kernels/formats/cusparse_csr/cusparse_csr_rules.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "kernels/tests/hand_written.hpp"
#if SPMVD_WITH_CUDA
#include "kernels/device.hpp"
#endif

namespace spmvd {
namespace {

using ::testing::HasSubstr;

TEST(CusparseCsrRules, ProposesCsrAlgorithmsOneAndTwo) {
  const CusparseCsrRules rules;
  const auto space = rules.candidates(testing::features(100, 100, 700), testing::h100());
  ASSERT_EQ(space.size(), 2U);
  EXPECT_EQ(space[0], (Candidate{.format = kCusparseCsrFormatId,
                                 .params = FieldSet::of(
                                     CusparseCsrParams{.library_algorithm = kCusparseSpmvCsrAlg1}),
                                 .launch = {}}));
  EXPECT_EQ(space[1], (Candidate{.format = kCusparseCsrFormatId,
                                 .params = FieldSet::of(
                                     CusparseCsrParams{.library_algorithm = kCusparseSpmvCsrAlg2}),
                                 .launch = {}}));
  EXPECT_EQ(kCusparseSpmvCsrAlg1, 2U);  // cusparseSpMVAlg_t values, stored in plans
  EXPECT_EQ(kCusparseSpmvCsrAlg2, 3U);
}

TEST(CusparseCsrRules, UsesThirtyTwoBitIndicesBelowTwoToTheThirtyOneEntries) {
  const CusparseCsrRules rules;
  const Candidate c = rules.candidates(testing::features(100, 100, 700), testing::h100())[0];
  const auto small = testing::features(100, 100, 700);
  EXPECT_EQ(rules.device_bytes(small, Precision::fp64, c),
            101U * 4 + 700U * (4 + 8) + CusparseCsrRules::workspace_bound_bytes(100));
  const std::int64_t big_nnz = std::int64_t{1} << 31;
  const auto big = testing::features(1 << 20, 1 << 20, big_nnz);
  EXPECT_EQ(rules.device_bytes(big, Precision::fp32, c),
            ((std::uint64_t{1} << 20) + 1) * 8 + static_cast<std::uint64_t>(big_nnz) * (8 + 4) +
                CusparseCsrRules::workspace_bound_bytes(1 << 20));
}

TEST(CusparseCsrRules, IsAdmissibleOnlyOnAGpuWithinTheBudget) {
  const CusparseCsrRules rules;
  const auto f = testing::features(100, 100, 700);
  const Candidate c = rules.candidates(f, testing::h100())[0];
  const std::uint64_t bytes = rules.device_bytes(f, Precision::fp32, c);
  EXPECT_TRUE(rules.admissible(f, testing::h100(), Precision::fp32, bytes));
  EXPECT_FALSE(rules.admissible(f, testing::h100(), Precision::fp32, bytes - 1));
  EXPECT_FALSE(rules.admissible(f, testing::eight_core_cpu(), Precision::fp32, bytes * 100));
}

TEST(CusparseCsrRules, RefusesStoredParamsOfAnotherShapeNamingTheField) {
  const CusparseCsrRules rules;
  const auto f = testing::features(100, 100, 700);
  Candidate c = rules.candidates(f, testing::h100())[0];
  ASSERT_EQ(CusparseCsrRules::params_of(c).library_algorithm, kCusparseSpmvCsrAlg1);
  c.params = FieldSet({{"library_algorithm", std::int64_t{2}}, {"block_dim", std::int64_t{4}}});
  EXPECT_FALSE(rules.is_valid(c, f, testing::h100()));
  try {
    CusparseCsrRules::params_of(c);
    FAIL() << "read a block_dim into cusparse_csr's parameters";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    EXPECT_STREQ(e.what(), "cusparse_csr: field 'block_dim' is not one of its fields");
  }
}

#if SPMVD_WITH_CUDA
TEST(CusparseCsrBuilder, RefusesParamsOfAnotherShapeNamingTheField) {
  const auto cpu = make_cpu_device();
  const CsrMatrix<double> m{1, 1, {0, 1}, {0}, {1.0}};
  const BuildSource source(m, *cpu);
  try {
    CusparseCsrRules::build(source, Precision::fp64,
                            Candidate{.format = kCusparseCsrFormatId, .params = {}, .launch = {}});
    FAIL() << "built without an algorithm";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    EXPECT_THAT(e.what(), HasSubstr("cusparse_csr: field 'library_algorithm' is missing"));
  }
}

TEST(CusparseCsrBuilder, RefusesAnAlgorithmThatIsNotACsrOne) {
  const auto cpu = make_cpu_device();
  const CsrMatrix<double> m{1, 1, {0, 1}, {0}, {1.0}};
  const BuildSource source(m, *cpu);
  try {
    CusparseCsrRules::build(
        source, Precision::fp64,
        Candidate{.format = kCusparseCsrFormatId,
                  .params = FieldSet::of(CusparseCsrParams{.library_algorithm = 1}),
                  .launch = {}});
    FAIL() << "built with the COO algorithm";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    EXPECT_THAT(e.what(), HasSubstr("library_algorithm 1 is not CUSPARSE_SPMV_CSR_ALG1"));
  }
}
#endif

}  // namespace
}  // namespace spmvd
