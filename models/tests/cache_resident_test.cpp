#include "models/cache_resident.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "models/model_predictor.hpp"
#include "models/tests/test_device.hpp"

namespace spmvd {
namespace {

constexpr double kL2 = 50e6;

CacheResidentCorrection kappa(std::vector<SamplePoint> points) {
  return {.format = FormatId{10}, .params = {}, .block_size = 0, .threads_per_row = 0,
          .ratio_vs_footprint = std::move(points)};
}

TEST(CacheResident, InterpolatesInLogFootprintBetweenTheSamples) {
  const CacheResidentCorrection c = kappa({{1e6, 0.8}, {4e6, 1.2}});
  EXPECT_DOUBLE_EQ(correction_factor(c, 5e5, kL2), 0.8);  // held below the smallest
  EXPECT_DOUBLE_EQ(correction_factor(c, 1e6, kL2), 0.8);
  EXPECT_NEAR(correction_factor(c, 2e6, kL2), 1.0, 1e-12);  // halfway in log
  EXPECT_DOUBLE_EQ(correction_factor(c, 4e6, kL2), 1.2);
}

TEST(CacheResident, FadesToTheFamilyModelAtL2) {
  const CacheResidentCorrection c = kappa({{1e6, 0.8}, {5e6, 1.5}});
  // log-halfway between the largest sample (5e6) and L2 (50e6): sqrt(5e6 * 50e6).
  EXPECT_NEAR(correction_factor(c, std::sqrt(5e6 * kL2), kL2), 1.25, 1e-12);
  EXPECT_DOUBLE_EQ(correction_factor(c, kL2, kL2), 1.0);
  EXPECT_DOUBLE_EQ(correction_factor(c, 1e9, kL2), 1.0);
  EXPECT_DOUBLE_EQ(correction_factor(kappa({}), 1e6, kL2), 1.0);  // not calibrated
}

TEST(CacheResident, ClampsANoisyRatio) {
  EXPECT_DOUBLE_EQ(correction_factor(kappa({{1e6, 50.0}}), 1e6, kL2), 4.0);
  EXPECT_DOUBLE_EQ(correction_factor(kappa({{1e6, 0.01}}), 1e6, kL2), 0.25);
}

TEST(CacheResident, FindsTheSameFormatParamsAndLanesWithTheNearestBlockSize) {
  std::vector<CacheResidentCorrection> all;
  for (const std::uint32_t block : {128u, 512u}) {
    CacheResidentCorrection c = kappa({{1e6, 1.0}});
    c.format = FormatId{2};
    c.block_size = block;
    c.threads_per_row = 4;
    all.push_back(c);
  }
  Candidate candidate{.format = FormatId{2}, .params = {}, .launch = {}};
  candidate.launch.block_size = 256;
  candidate.launch.threads_per_row = 4;
  // 256 is one step from 128 and two from 512.
  ASSERT_NE(find_correction(all, candidate), nullptr);
  EXPECT_EQ(find_correction(all, candidate)->block_size, 128u);
  candidate.launch.block_size = 1024;
  EXPECT_EQ(find_correction(all, candidate)->block_size, 512u);
  candidate.launch.threads_per_row = 8;  // other lanes: no correction
  EXPECT_EQ(find_correction(all, candidate), nullptr);
  candidate.launch.threads_per_row = 4;
  candidate.params.library_algorithm = 1;  // other parameters: none either
  EXPECT_EQ(find_correction(all, candidate), nullptr);
}

TEST(CacheResident, FootprintIsTheFormatsArraysAndBothVectors) {
  MatrixFeatures f;
  f.rows = 1000;
  f.cols = 2000;
  EXPECT_DOUBLE_EQ(footprint_bytes(f, 12345, Precision::fp64), 12345.0 + 3000.0 * 8);
  EXPECT_DOUBLE_EQ(footprint_bytes(f, 12345, Precision::fp32), 12345.0 + 3000.0 * 4);
}

TEST(ModelPredictor, MultipliesByTheCacheResidentCorrectionBelowL2Only) {
  ModelSet set;
  set.format_bytes = {{.format = FormatId{10},
                       .bytes = {.time_vs_bytes = {.intercept = 0.005, .slope = 1e-9, .quality = {}}}}};
  const ModelPredictor plain(set);
  set.cache_resident = {kappa({{1e3, 2.0}, {1e6, 2.0}})};
  const ModelPredictor corrected(set);
  const DeviceInfo device = testing_support::h100_like();
  MatrixFeatures small;
  small.rows = small.cols = 1000;
  small.nnz = 5000;
  const Candidate candidate{.format = FormatId{10}, .params = {}, .launch = {}};
  const double base = plain.predict_ms(ModelFamily::other, small, candidate, device, 60000).ms;
  EXPECT_NEAR(corrected.predict_ms(ModelFamily::other, small, candidate, device, 60000).ms,
              2.0 * base, 1e-12);
  // A matrix beyond L2: unchanged.
  MatrixFeatures large = small;
  large.rows = large.cols = 100'000'000;
  EXPECT_DOUBLE_EQ(
      corrected.predict_ms(ModelFamily::other, large, candidate, device, 600'000'000).ms,
      plain.predict_ms(ModelFamily::other, large, candidate, device, 600'000'000).ms);
}

}  // namespace
}  // namespace spmvd
