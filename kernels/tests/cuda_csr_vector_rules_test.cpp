#include "kernels/formats/cuda_csr_vector/cuda_csr_vector_rules.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "core/error.hpp"
#include "kernels/tests/hand_written.hpp"
#if SPMVD_WITH_CUDA
#include "kernels/device.hpp"
#endif

namespace spmvd {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::set<std::uint32_t> lanes_of(const std::vector<Candidate>& space) {
  std::set<std::uint32_t> out;
  for (const Candidate& c : space) out.insert(c.launch.threads_per_row);
  return out;
}

TEST(CudaCsrVectorRules, KeepsLaneCountsBetweenAThirtySecondAndTwiceTheMeanRowLength) {
  const CudaCsrVectorRules rules;
  // mean 3: 2 and 4 lanes (8 > 2 * 3).
  EXPECT_THAT(lanes_of(rules.candidates(testing::features(1000, 1000, 3000), testing::h100())),
              ElementsAre(2U, 4U));
  // mean 20: every compiled width.
  EXPECT_THAT(lanes_of(rules.candidates(testing::features(1000, 1000, 20000), testing::h100())),
              ElementsAre(2U, 4U, 8U, 16U, 32U));
  // mean 300: at least 300 / 32 = 9.4 lanes.
  EXPECT_THAT(lanes_of(rules.candidates(testing::features(1000, 1000, 300000), testing::h100())),
              ElementsAre(16U, 32U));
}

TEST(CudaCsrVectorRules, KeepsOneWidthWhenThePruningLeavesNone) {
  const CudaCsrVectorRules rules;
  // mean 0.5 (mostly empty rows): the narrowest group.
  EXPECT_THAT(lanes_of(rules.candidates(testing::features(1000, 1000, 500), testing::h100())),
              ElementsAre(2U));
  // mean 5000: even 32 lanes is below mean / 32 = 156; keep the widest.
  EXPECT_THAT(lanes_of(rules.candidates(testing::features(10, 100000, 50000), testing::h100())),
              ElementsAre(32U));
}

TEST(CudaCsrVectorRules, ProposesOnlyCompiledConcreteVariants) {
  const CudaCsrVectorRules rules;
  for (const std::int64_t nnz : {0, 1000, 20000, 300000, 5000000}) {
    const auto space = rules.candidates(testing::features(1000, 100000, nnz), testing::h100());
    EXPECT_EQ(space.size() % kCsrVectorBlockSizes.size(), 0U);
    for (const Candidate& c : space) {
      EXPECT_TRUE(std::ranges::find(kCsrVectorThreadsPerRow, c.launch.threads_per_row) !=
                  kCsrVectorThreadsPerRow.end());
      EXPECT_TRUE(std::ranges::find(kCsrVectorBlockSizes, c.launch.block_size) !=
                  kCsrVectorBlockSizes.end());
      EXPECT_GE(c.launch.grid_size, 1U);
      EXPECT_EQ(c.params, FormatParams{});
    }
  }
}

TEST(CudaCsrVectorRules, SizesTheGridForAllRowsUpToOneResidentWave) {
  const DeviceInfo h100 = testing::h100();
  // 1000 rows x 8 lanes / 256 threads = 31.25 -> 32 blocks.
  EXPECT_EQ(CudaCsrVectorRules::grid_size(1000, 8, 256, h100), 32U);
  // 10^7 rows: capped at 132 SMs x (2048 / 256) blocks.
  EXPECT_EQ(CudaCsrVectorRules::grid_size(10000000, 8, 256, h100), 132U * 8);
  // 128-thread blocks: 2048 / 128 = 16 per SM, under the 32-block limit.
  EXPECT_EQ(CudaCsrVectorRules::grid_size(10000000, 2, 128, h100), 132U * 16);
  // No rows still launches a valid (empty) grid.
  EXPECT_EQ(CudaCsrVectorRules::grid_size(0, 32, 512, h100), 1U);
}

TEST(CudaCsrVectorRules, CountsOffsetsIndicesAndValues) {
  const CudaCsrVectorRules rules;
  const auto f = testing::features(100, 100, 700);
  const Candidate any{.format = kCudaCsrVectorFormatId, .params = {}, .launch = {}};
  EXPECT_EQ(rules.device_bytes(f, Precision::fp32, any), 101U * 8 + 700U * 8);
  EXPECT_EQ(rules.device_bytes(f, Precision::fp64, any), 101U * 8 + 700U * 12);
}

TEST(CudaCsrVectorRules, IsAdmissibleOnlyOnAGpuWithinTheBudget) {
  const CudaCsrVectorRules rules;
  const auto f = testing::features(100, 100, 700);
  const std::uint64_t bytes = 101U * 8 + 700U * 12;
  EXPECT_TRUE(rules.admissible(f, testing::h100(), Precision::fp64, bytes));
  EXPECT_FALSE(rules.admissible(f, testing::h100(), Precision::fp64, bytes - 1));
  EXPECT_FALSE(rules.admissible(f, testing::eight_core_cpu(), Precision::fp64, bytes * 100));
}

TEST(CudaCsrVectorRules, RejectsAStoredCandidateItWouldNoLongerPropose) {
  const CudaCsrVectorRules rules;
  const auto f = testing::features(1000, 1000, 3000);
  Candidate c = rules.candidates(f, testing::h100()).front();
  EXPECT_TRUE(rules.is_valid(c, f, testing::h100()));
  c.launch.threads_per_row = 32;  // pruned for mean row length 3
  EXPECT_FALSE(rules.is_valid(c, f, testing::h100()));
}

#if SPMVD_WITH_CUDA
TEST(CudaCsrVectorBuilder, RefusesThreadsPerRowWithoutACompiledKernel) {
  const auto cpu = make_cpu_device();
  const CsrMatrix<double> m{1, 1, {0, 1}, {0}, {1.0}};
  const BuildSource source(m, *cpu);
  const Candidate bad{.format = kCudaCsrVectorFormatId,
                      .params = {},
                      .launch = {.block_size = 256, .threads_per_row = 3, .grid_size = 1}};
  try {
    CudaCsrVectorRules::build(source, Precision::fp64, bad);
    FAIL() << "built threads_per_row 3";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    EXPECT_THAT(e.what(), HasSubstr("threads_per_row 3 is not a compiled variant"));
  }
}

TEST(CudaCsrVectorBuilder, RefusesTheCpuDevice) {
  const auto cpu = make_cpu_device();
  const CsrMatrix<double> m{1, 1, {0, 1}, {0}, {1.0}};
  const BuildSource source(m, *cpu);
  const Candidate good{.format = kCudaCsrVectorFormatId,
                       .params = {},
                       .launch = {.block_size = 256, .threads_per_row = 2, .grid_size = 1}};
  try {
    CudaCsrVectorRules::build(source, Precision::fp64, good);
    FAIL() << "built a GPU format on the CPU device";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::failed_precondition);
  }
}
#endif

}  // namespace
}  // namespace spmvd
