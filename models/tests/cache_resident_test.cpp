#include "models/cache_resident.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "kernels/formats/cusparse_sell/cusparse_sell_rules.hpp"
#include "models/families/bytes/bytes_record.hpp"
#include "models/locality.hpp"
#include "models/model_predictor.hpp"
#include "models/tests/test_device.hpp"

namespace spmvd {
namespace {

constexpr double kL2 = 50e6;

// The format of id 10, predicted by the bytes family with its own record.
const CusparseSellRules cusparse_sell;

// kappa 0.5 at (length 2, 1000 rows), 2 at (length 32, 1000 rows), 1 at 100000 rows; the
// largest sample 5 MB.
CacheResidentCorrection kappa() {
  const GridSample grid[] = {{.width = 2, .rows = 1000, .ms = 0.5},
                             {.width = 32, .rows = 1000, .ms = 2.0},
                             {.width = 2, .rows = 100000, .ms = 1.0},
                             {.width = 32, .rows = 100000, .ms = 1.0}};
  return {.format = FormatId{10}, .params = {}, .block_size = 0, .threads_per_row = 0,
          .ratio_vs_length_rows = fit_log_grid(grid), .largest_footprint_bytes = 5e6};
}

MatrixFeatures rows_of(std::int64_t rows, double mean_length) {
  MatrixFeatures f;
  f.rows = f.cols = rows;
  f.row_length_mean = mean_length;
  return f;
}

TEST(CacheResident, InterpolatesInLogRowLengthAndLogRows) {
  const CacheResidentCorrection c = kappa();
  EXPECT_NEAR(correction_factor(c, rows_of(1000, 2), 1.0, 1e6, kL2), 0.5, 1e-12);
  EXPECT_NEAR(correction_factor(c, rows_of(1000, 32), 1.0, 1e6, kL2), 2.0, 1e-12);
  // log-halfway in length (8 between 2 and 32): the geometric mean of 0.5 and 2.
  EXPECT_NEAR(correction_factor(c, rows_of(1000, 8), 1.0, 1e6, kL2), 1.0, 1e-12);
  // Clamped to the grid: fewer rows and longer rows than sampled take the edge.
  EXPECT_NEAR(correction_factor(c, rows_of(10, 500), 1.0, 1e6, kL2), 2.0, 1e-12);
  // log-halfway in rows (10000) at length 2: sqrt(0.5 * 1).
  EXPECT_NEAR(correction_factor(c, rows_of(10000, 2), 1.0, 1e6, kL2), std::sqrt(0.5), 1e-12);
}

TEST(CacheResident, FadesToTheFamilyModelBetweenTheLargestSampleAndL2) {
  const CacheResidentCorrection c = kappa();
  const MatrixFeatures f = rows_of(1000, 32);  // kappa 2
  EXPECT_NEAR(correction_factor(c, f, 1.0, 5e6, kL2), 2.0, 1e-12);
  // log-halfway between 5 MB and 50 MB: halfway from 2 to 1.
  EXPECT_NEAR(correction_factor(c, f, 1.0, std::sqrt(5e6 * kL2), kL2), 1.5, 1e-12);
  EXPECT_DOUBLE_EQ(correction_factor(c, f, 1.0, kL2, kL2), 1.0);
  EXPECT_DOUBLE_EQ(correction_factor(c, f, 1.0, 1e9, kL2), 1.0);
  CacheResidentCorrection none = c;
  none.ratio_vs_length_rows = {};
  EXPECT_DOUBLE_EQ(correction_factor(none, f, 1.0, 1e6, kL2), 1.0);  // not calibrated
}

// kappa() with a banded twin at every grid point: T_banded / T_random 0.6 at length 2, 0.3 at
// length 32, whatever the rows.
CacheResidentCorrection kappa_with_bands() {
  CacheResidentCorrection c = kappa();
  const GridSample banded[] = {{.width = 2, .rows = 1000, .ms = 0.6},
                               {.width = 32, .rows = 1000, .ms = 0.3},
                               {.width = 2, .rows = 100000, .ms = 0.6},
                               {.width = 32, .rows = 100000, .ms = 0.3}};
  c.banded_ratio_vs_length_rows = fit_log_grid(banded);
  return c;
}

TEST(CacheResident, ScalesKappaByTheInL2BandedRatioAtTheMatrixsRandomness) {
  const CacheResidentCorrection c = kappa_with_bands();
  const MatrixFeatures f = rows_of(1000, 32);  // kappa 2, banded ratio 0.3
  EXPECT_NEAR(correction_factor(c, f, 1.0, 1e6, kL2), 2.0, 1e-12);  // random: kappa alone
  EXPECT_NEAR(correction_factor(c, f, 0.0, 1e6, kL2), 2.0 * 0.3, 1e-12);  // a band
  // Linear in the randomness, as the DRAM locality factor: 0.3 + 0.7 * 0.5.
  EXPECT_NEAR(correction_factor(c, f, 0.5, 1e6, kL2), 2.0 * 0.65, 1e-12);
  // Interpolated in log row length like kappa: sqrt(0.6 * 0.3) at length 8.
  EXPECT_NEAR(correction_factor(c, rows_of(1000, 8), 0.0, 1e6, kL2), std::sqrt(0.18), 1e-12);
  // Faded with kappa: log-halfway between the largest sample and L2, halfway from 0.6 to 1.
  EXPECT_NEAR(correction_factor(c, f, 0.0, std::sqrt(5e6 * kL2), kL2), 0.8, 1e-12);
  EXPECT_DOUBLE_EQ(correction_factor(c, f, 0.0, kL2, kL2), 1.0);
  // A correction without banded twins prices every matrix as random.
  EXPECT_NEAR(correction_factor(kappa(), f, 0.0, 1e6, kL2), 2.0, 1e-12);
}

TEST(CacheResident, WeighsTheCorrectionInFullUpToTheLargestSampleAndNotFromL2) {
  const CacheResidentCorrection c = kappa();
  EXPECT_DOUBLE_EQ(correction_weight(c, 1e6, kL2), 1.0);
  EXPECT_DOUBLE_EQ(correction_weight(c, 5e6, kL2), 1.0);
  EXPECT_NEAR(correction_weight(c, std::sqrt(5e6 * kL2), kL2), 0.5, 1e-12);
  EXPECT_DOUBLE_EQ(correction_weight(c, kL2, kL2), 0.0);
  CacheResidentCorrection none = c;
  none.ratio_vs_length_rows = {};
  EXPECT_DOUBLE_EQ(correction_weight(none, 1e6, kL2), 0.0);
}

TEST(CacheResident, PredictsAtRandomGathersWhereTheCorrectionApplies) {
  EXPECT_DOUBLE_EQ(randomness_under_correction(0.1, 0.0), 0.1);  // beyond L2: the matrix's own
  EXPECT_DOUBLE_EQ(randomness_under_correction(0.1, 1.0), 1.0);  // as kappa's random samples
  EXPECT_DOUBLE_EQ(randomness_under_correction(0.2, 0.5), 0.6);
  EXPECT_DOUBLE_EQ(randomness_under_correction(1.0, 0.5), 1.0);
}

TEST(CacheResident, ClampsANoisyRatio) {
  const GridSample wild[] = {{.width = 2, .rows = 1000, .ms = 50.0},
                             {.width = 32, .rows = 1000, .ms = 0.01},
                             {.width = 2, .rows = 100000, .ms = 50.0},
                             {.width = 32, .rows = 100000, .ms = 0.01}};
  CacheResidentCorrection c = kappa();
  c.ratio_vs_length_rows = fit_log_grid(wild);
  EXPECT_DOUBLE_EQ(correction_factor(c, rows_of(1000, 2), 1.0, 1e6, kL2), 4.0);
  EXPECT_DOUBLE_EQ(correction_factor(c, rows_of(1000, 32), 1.0, 1e6, kL2), 0.25);
}

TEST(CacheResident, FindsTheSameFormatParamsAndLanesWithTheNearestBlockSize) {
  std::vector<CacheResidentCorrection> all;
  for (const std::uint32_t block : {128u, 512u}) {
    CacheResidentCorrection c = kappa();
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
  candidate.params = FieldSet({{"library_algorithm", std::int64_t{1}}});  // other parameters: none
  EXPECT_EQ(find_correction(all, candidate), nullptr);
}

TEST(CacheResident, FindsCooByTheNearestEntriesPerThreadBeforeTheBlockSize) {
  std::vector<CacheResidentCorrection> all;
  for (const std::uint32_t entries : {2u, 32u}) {
    CacheResidentCorrection c = kappa();
    c.format = FormatId{6};
    c.block_size = 256;
    c.entries_per_thread = entries;
    all.push_back(c);
  }
  const Candidate candidate{.format = FormatId{6}, .params = {}, .launch = {.block_size = 512}};
  EXPECT_EQ(find_correction(all, candidate, 23.4)->entries_per_thread, 32u);
  EXPECT_EQ(find_correction(all, candidate, 3.0)->entries_per_thread, 2u);
}

TEST(CacheResident, FootprintIsTheFormatsArraysAndBothVectors) {
  MatrixFeatures f;
  f.rows = 1000;
  f.cols = 2000;
  EXPECT_DOUBLE_EQ(footprint_bytes(f, 12345, Precision::fp64), 12345.0 + 3000.0 * 8);
  EXPECT_DOUBLE_EQ(footprint_bytes(f, 12345, Precision::fp32), 12345.0 + 3000.0 * 4);
}

TEST(ModelPredictor, MultipliesByTheCacheResidentCorrectionBelowL2NeverBelowTheFloor) {
  ModelSet set;
  set.records.update<BytesRecord>([&](BytesRecord& r) {
    r.formats = {{.format = FormatId{10},
                  .bytes = {.time_vs_bytes = {.intercept = 0.005, .slope = 1e-9, .quality = {}}},
                  .floor_ms = 0.004}};
  });
  const ModelPredictor plain(set);
  set.cache_resident = {kappa()};
  const ModelPredictor corrected(set);
  const DeviceInfo device = testing_support::h100_like();
  MatrixFeatures small = rows_of(1000, 32);  // kappa 2
  small.nnz = 32000;
  const Candidate candidate{.format = FormatId{10}, .params = {}, .launch = {}};
  const double base = plain.predict_ms(cusparse_sell, small, candidate, device, 60000).ms;
  EXPECT_NEAR(corrected.predict_ms(cusparse_sell, small, candidate, device, 60000).ms, 2.0 * base,
              1e-12);
  // kappa 0.5 would take it below the format's tiny-sample floor: held there.
  MatrixFeatures short_rows = rows_of(1000, 2);
  short_rows.nnz = 2000;
  EXPECT_DOUBLE_EQ(
      corrected.predict_ms(cusparse_sell, short_rows, candidate, device, 6000).ms,
      std::max(0.5 * plain.predict_ms(cusparse_sell, short_rows, candidate, device, 6000).ms,
               0.004));
  // A matrix beyond L2: unchanged.
  MatrixFeatures large = rows_of(100'000'000, 8);
  EXPECT_DOUBLE_EQ(corrected.predict_ms(cusparse_sell, large, candidate, device, 600'000'000).ms,
                   plain.predict_ms(cusparse_sell, large, candidate, device, 600'000'000).ms);
  // The small rows as a part of a composed format share L2 with the other parts in one
  // multiply: kappa within a small composition, none within one beyond L2.
  EXPECT_NEAR(corrected.predict_ms(cusparse_sell, small, candidate, device, 60000, 1e6).ms,
              2.0 * base, 1e-12);
  EXPECT_DOUBLE_EQ(
      corrected.predict_ms(cusparse_sell, small, candidate, device, 60000, 4.0 * kL2).ms, base);
}

TEST(ModelPredictor, PredictsABandInsideTheCorrectionAsTheRandomSamplesKappaWasMeasuredOn) {
  ModelSet set;
  set.records.update<BytesRecord>([&](BytesRecord& r) {
    r.formats = {{.format = FormatId{10},
                  .bytes = {.time_vs_bytes = {.intercept = 0.005, .slope = 1e-9, .quality = {}},
                            .banded_ratio = {{1e3, 0.5}, {1e9, 0.5}}},
                  .floor_ms = 0.0}};
  });
  const DeviceInfo device = testing_support::h100_like();
  const Candidate candidate{.format = FormatId{10}, .params = {}, .launch = {}};
  MatrixFeatures band = rows_of(100'000, 8);
  band.nnz = 800'000;
  band.x_sectors_per_nonzero = banded_sectors_per_nonzero(8.0);
  MatrixFeatures random = band;
  random.x_sectors_per_nonzero = random_sectors_per_nonzero(8.0, 1e5);
  const auto ms = [&](const ModelPredictor& p, const MatrixFeatures& f, std::uint64_t bytes) {
    return p.predict_ms(cusparse_sell, f, candidate, device, bytes).ms;
  };
  const ModelPredictor plain(set);
  set.cache_resident = {kappa()};
  const ModelPredictor corrected(set);
  // Without a correction the band takes the banded ratio.
  EXPECT_NEAR(ms(plain, band, 1'000'000), 0.5 * ms(plain, random, 1'000'000), 1e-12);
  // Inside the correction (2.6 MB with x and y, below its largest sample's 5 MB) it is priced
  // as random, then corrected: kappa was measured against the random samples' predictions.
  EXPECT_DOUBLE_EQ(ms(corrected, band, 1'000'000), ms(corrected, random, 1'000'000));
  // Beyond L2 the locality factor is back in full.
  EXPECT_NEAR(ms(corrected, band, 600'000'000), 0.5 * ms(corrected, random, 600'000'000), 1e-12);
  // With the correction's own banded twins (ratio 0.3-0.6 in L2) the band is priced by those.
  set.cache_resident = {kappa_with_bands()};
  const ModelPredictor in_l2_bands(set);
  const double ratio_at_8 = std::sqrt(0.6 * 0.3);
  EXPECT_NEAR(ms(in_l2_bands, band, 1'000'000), ratio_at_8 * ms(in_l2_bands, random, 1'000'000),
              1e-12);
  EXPECT_DOUBLE_EQ(ms(in_l2_bands, random, 1'000'000), ms(corrected, random, 1'000'000));
}

TEST(CriticalPathStep, IsTheInL2StepUpToHalfOfL2AndTheBeyondStepFromTwiceL2) {
  const double l2 = 50e6, in_l2 = 4e-5, beyond = 1.6e-4;
  EXPECT_DOUBLE_EQ(critical_path_step_ms(in_l2, beyond, 1e6, l2), in_l2);
  EXPECT_DOUBLE_EQ(critical_path_step_ms(in_l2, beyond, 0.5 * l2, l2), in_l2);
  EXPECT_NEAR(critical_path_step_ms(in_l2, beyond, l2, l2), 8e-5, 1e-15);  // geometric mean
  EXPECT_NEAR(critical_path_step_ms(in_l2, beyond, 2.0 * l2, l2), beyond, 1e-15);
  EXPECT_DOUBLE_EQ(critical_path_step_ms(in_l2, beyond, 1e12, l2), beyond);
  // Without a beyond-L2 step (not calibrated) the one step holds everywhere.
  EXPECT_DOUBLE_EQ(critical_path_step_ms(in_l2, 0.0, 1e12, l2), in_l2);
}

}  // namespace
}  // namespace spmvd
