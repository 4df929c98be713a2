#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "core/error.hpp"
#include "kernels/formats/cuda_coo/cuda_coo_rules.hpp"
#include "kernels/formats/cuda_csr_vector/cuda_csr_vector_rules.hpp"
#include "kernels/formats/cuda_ell/cuda_ell_rules.hpp"
#include "kernels/formats/cuda_hyb/cuda_hyb_rules.hpp"
#include "models/df_split.hpp"
#include "models/families/bytes/bytes_record.hpp"
#include "models/families/coo/coo_record.hpp"
#include "models/families/coo/row_writes.hpp"
#include "models/families/csr_vector/csr_vector_record.hpp"
#include "models/families/ell/ell_family.hpp"
#include "models/families/ell/ell_model.hpp"
#include "models/families/ell/ell_record.hpp"
#include "models/families/hyb/hyb_model.hpp"
#include "models/model_predictor.hpp"
#include "models/tests/test_device.hpp"

namespace spmvd {
namespace {

using testing_support::h100_like;

FitQuality perfect(double x_min, double x_max, std::size_t samples = 10) {
  return {.sample_count = samples, .rms_relative_error = 0, .max_relative_error = 0,
          .x_min = x_min, .x_max = x_max};
}

CalibratedKernel kernel(int block_size, int threads_per_row = 1, int registers = 32) {
  return {.resources = {.threads_per_block = block_size, .registers_per_thread = registers},
          .threads_per_row = threads_per_row};
}

Candidate launch(std::uint32_t block_size, std::uint32_t threads_per_row = 0) {
  Candidate c;
  c.launch.block_size = block_size;
  c.launch.threads_per_row = threads_per_row;
  return c;
}

// cuda_ell's candidate padded to ell_width entries a row.
Candidate ell_launch(std::uint32_t block_size, std::uint32_t ell_width) {
  Candidate c = launch(block_size);
  c.format = kCudaEllFormatId;
  c.params = FieldSet::of(CudaEllParams{.ell_width = ell_width});
  return c;
}

// cuda_hyb's candidate keeping ell_width (K) entries a row in its ELL part.
Candidate hyb_launch(std::uint32_t block_size, std::uint32_t ell_width) {
  Candidate c = launch(block_size);
  c.format = kCudaHybFormatId;
  c.params = FieldSet::of(CudaHybParams{.ell_width = ell_width});
  return c;
}

// Formats of each family, as the predictor is asked for them.
const CudaCsrVectorRules cuda_csr_vector;
const CudaCooRules cuda_coo;
const CudaHybRules cuda_hyb;

// COO: 0.01 ms + 1e-6 ms per non-zero, sampled from 1e4 to 1e7 non-zeros.
CooCalibration coo_256() {
  return {.kernel = kernel(256),
          .time_vs_nnz = {.intercept = 0.01, .slope = 1e-6, .quality = perfect(1e4, 1e7)}};
}

// ELL: ms at (width, rows) = (1, 1e3) 0.01, (10, 1e3) 0.02, (1, 1e5) 0.1, (10, 1e5) 1.0.
EllCalibration ell_256() {
  LogGridFit grid;
  grid.widths = {1, 10};
  grid.rows = {1e3, 1e5};
  grid.log_ms = {std::log(0.01), std::log(0.02), std::log(0.1), std::log(1.0)};
  grid.quality = perfect(1, 10, 4);
  return {.kernel = kernel(256), .time_vs_width_rows = grid};
}

MatrixFeatures features_with(std::vector<RowLengthCount> distribution, std::int64_t cols) {
  MatrixFeatures f;
  f.cols = cols;
  f.distribution = std::move(distribution);
  double sum = 0, sum2 = 0;
  for (const RowLengthCount& s : f.distribution) {
    f.rows += s.rows;
    f.nnz += s.length * s.rows;
    f.row_length_max = std::max(f.row_length_max, s.length);
    sum += static_cast<double>(s.length * s.rows);
    sum2 += static_cast<double>(s.length * s.length * s.rows);
  }
  f.row_length_min = f.distribution.front().length;
  f.row_length_mean = sum / static_cast<double>(f.rows);
  f.row_length_stddev = std::sqrt(sum2 / static_cast<double>(f.rows) -
                                  f.row_length_mean * f.row_length_mean);
  return f;
}

TEST(CooModel, PredictsTheLineAtTheMatrixNonZeros) {
  const CooModel model({coo_256()});
  MatrixFeatures f;
  f.nnz = 2'000'000;
  const Prediction p = model.predict_ms(f, launch(256), h100_like());
  EXPECT_DOUBLE_EQ(p.ms, 0.01 + 2.0);
  EXPECT_DOUBLE_EQ(p.confidence, 0.75);
}

TEST(CooModel, HoldsTheLaunchFloorBelowTheSmallestSample) {
  const CooModel model({coo_256()});
  EXPECT_DOUBLE_EQ(model.predict_nnz_ms(100, {.block_size = 256}).ms, 0.01 + 1e-6 * 1e4);
}

TEST(CooModel, UsesTheNearestBlockSizeWithLowerConfidence) {
  const CooModel model({coo_256()});
  const Prediction p = model.predict_nnz_ms(1'000'000, {.block_size = 128});
  EXPECT_DOUBLE_EQ(p.ms, 1.01);
  EXPECT_DOUBLE_EQ(p.confidence, 0.75 * 0.7);
}

TEST(CooModel, UsesTheRecordOfTheNearestEntriesPerThreadBeforeTheBlockSize) {
  CooCalibration e2 = coo_256(), e32 = coo_256();
  e2.entries_per_thread = 2;
  e32.entries_per_thread = 32;
  e32.time_vs_nnz.intercept = 0.03;  // 32 dependent steps per warp: a longer fixed part
  const CooModel model({e2, e32});
  // 1M non-zeros in 122 blocks of 256: E = 32.0 -> the E = 32 line, exactly.
  const Prediction p32 = model.predict_nnz_ms(1'000'000, {.block_size = 256, .grid_size = 122});
  EXPECT_DOUBLE_EQ(p32.ms, 0.03 + 1.0);
  EXPECT_DOUBLE_EQ(p32.confidence, 0.75);
  // A tiny matrix in one block of 512: E = 12000 / 512 = 23.4, nearer 32 than 2 in log; the
  // block size differs, so it is not exact.
  const Prediction small = model.predict_nnz_ms(12'000, {.block_size = 512, .grid_size = 1});
  EXPECT_DOUBLE_EQ(small.ms, 0.03 + 0.012);
  EXPECT_DOUBLE_EQ(small.confidence, 0.75 * 0.7);
  // E = 2 on a block of 128: the E = 2 record, whatever the block size.
  EXPECT_DOUBLE_EQ(model.predict_nnz_ms(1'000'000, {.block_size = 128, .grid_size = 3907}).ms,
                   0.01 + 1.0);
  EXPECT_DOUBLE_EQ(coo_entries_per_thread(1'000'000, {.block_size = 128, .grid_size = 3907}),
                   1'000'000.0 / (128.0 * 3907.0));
  EXPECT_DOUBLE_EQ(coo_entries_per_thread(1'000, {.block_size = 0}), 0.0);  // no launch: none
}

TEST(CooModel, RefusesToPredictWithoutCalibration) {
  const CooModel model({});
  try {
    model.predict_nnz_ms(10, {.block_size = 256});
    FAIL() << "expected Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::failed_precondition);
    EXPECT_STREQ(e.what(), "no coo calibration in the model set");
  }
}

TEST(EllModel, IsExactAtACalibratedShape) {
  const EllModel model({ell_256()});
  MatrixFeatures f;
  f.rows = 100'000;
  f.row_length_max = 10;
  const Prediction p = model.predict_ms(f, launch(256), h100_like());
  EXPECT_NEAR(p.ms, 1.0, 1e-12);
  EXPECT_DOUBLE_EQ(p.confidence, 0.75);
}

TEST(EllModel, InterpolatesInLogRowsAndLogWidth) {
  const EllModel model({ell_256()});
  // rows 1e4 is halfway between 1e3 and 1e5 in log: sqrt(0.02 * 1.0).
  EXPECT_NEAR(model.predict_shape_ms(10, 10'000, 256).ms, std::sqrt(0.02), 1e-12);
  // width 5 at rows 1e3: 0.01 * 2^(log 5 / log 10).
  EXPECT_NEAR(model.predict_shape_ms(5, 1'000, 256).ms,
              0.01 * std::pow(2.0, std::log(5.0) / std::log(10.0)), 1e-12);
}

TEST(EllModel, ScalesWithRowsBeyondTheGrid) {
  const EllModel model({ell_256()});
  const Prediction p = model.predict_shape_ms(10, 200'000, 256);
  EXPECT_NEAR(p.ms, 2.0, 1e-12);
  EXPECT_DOUBLE_EQ(p.confidence, 0.75 * 0.7);
}

TEST(EllModel, UsesTheCandidatesEllWidthOverTheLongestRow) {
  const EllModel model({ell_256()});
  MatrixFeatures f;
  f.rows = 1'000;
  f.row_length_max = 10;
  EXPECT_NEAR(model.predict_ms(f, ell_launch(256, 1), h100_like()).ms, 0.01, 1e-12);
}

// The ell family prices a padded ELL at the slots its warps walk: each row stops with the group
// of four slots that holds its first padding slot (grouped_slot_sum).
TEST(EllFamily, PricesAPaddedEllAtTheWidthItsWarpsWalk) {
  ModelSet set;  // fp64
  set.records.put(EllRecord{.variants = {ell_256()}});
  const std::unique_ptr<FamilyModel> family = make_ell_family(set);
  const EllModel model({ell_256()});
  const Candidate padded = ell_launch(256, 10);
  const auto predict = [&](const MatrixFeatures& f) {
    return family->predict_ms({.features = f, .candidate = padded, .device = h100_like()}).ms;
  };
  // Rows of 1 padded to 10: every row walks one group of four.
  EXPECT_NEAR(predict(features_with({{1, 5000}}, 100)),
              model.predict_shape_ms(4, 5000, 256).ms, 1e-12);
  // Rows of 10 walk the width.
  EXPECT_NEAR(predict(features_with({{10, 5000}}, 100)),
              model.predict_shape_ms(10, 5000, 256).ms, 1e-12);
  // One row in 64 of 10 among rows of 5 (which walk 8): 1 - (63/64)^32 of the warps walk 10,
  // 8.79 slots: 9.
  EXPECT_NEAR(predict(features_with({{5, 6300}, {10, 100}}, 100)),
              model.predict_shape_ms(9, 6400, 256).ms, 1e-12);
  // Rows of 10 among 63 times as many empty rows (which walk one group): 6.37 slots, 6.
  MatrixFeatures sparse = features_with({{10, 100}}, 100);
  sparse.empty_rows = 6300;
  sparse.rows += 6300;
  EXPECT_NEAR(predict(sparse), model.predict_shape_ms(6, 6400, 256).ms, 1e-12);
  // 1000 rows of 1 padded to 10: the walk of 4 (0.0152 ms on this grid) is below a launch of a
  // few rows of 10 (the grid's fewest rows, 0.02 ms), whose chain a warp holding a row of the
  // width would walk: the bound.
  MatrixFeatures few = features_with({{1, 999}, {10, 1}}, 100);
  EXPECT_NEAR(model.predict_shape_ms(4, 1000, 256).ms, 0.01 * std::pow(2.0, std::log10(4.0)),
              1e-12);
  EXPECT_NEAR(predict(few), model.predict_shape_ms(10, 1, 256).ms, 1e-12);
  EXPECT_NEAR(predict(few), 0.02, 1e-12);
  // A row longer than the width: the width is a composed format's walk already, kept.
  EXPECT_NEAR(predict(features_with({{1, 5000}, {30, 10}}, 100)),
              model.predict_shape_ms(10, 5010, 256).ms, 1e-12);
}

TEST(DfSplit, CountsEllAndCooEntriesOfPaper000Example) {
  // Paper 000 Sec. 5.1: b = [2, 3, 2, 1, 0, 1, 1] for lengths 1..7.
  const MatrixFeatures f =
      features_with({{1, 2}, {2, 3}, {3, 2}, {4, 1}, {6, 1}, {7, 1}}, 10);
  const EllCooSplit split = ell_coo_split(f, 3);
  EXPECT_EQ(split.ell_nnz, 2 + 6 + 6 + 3 * 3);
  EXPECT_EQ(split.coo_nnz, 1 + 3 + 4);
  EXPECT_EQ(split.coo_rows, 3);
  EXPECT_EQ(split.ell_entries, 30);
  EXPECT_EQ(split.ell_nnz + split.coo_nnz, f.nnz);
}

TEST(HybModel, AddsTheEllPartAtWidthKAndTheCooRemainder) {
  const EllModel ell({ell_256()});
  const CooModel coo({coo_256()});
  const HybModel model(ell, coo);
  // 160 rows: lengths 1 x100, 3 x50, 10 x10; K = 3 leaves 10 rows x 7 = 70 non-zeros for COO.
  const MatrixFeatures f = features_with({{1, 100}, {3, 50}, {10, 10}}, 1000);
  const Prediction p = model.predict_ms(f, hyb_launch(256, 3), h100_like());
  // ELL(3, 160): rows clamp to 1e3 -> 0.01 * 2^(log 3 / log 10); COO(70) holds at 1e4 -> 0.02.
  const double ell_ms = 0.01 * std::pow(2.0, std::log(3.0) / std::log(10.0));
  EXPECT_NEAR(p.ms, ell_ms + 0.02, 1e-12);
  EXPECT_DOUBLE_EQ(p.confidence, 0.75 * 0.7 * 0.9);
}

// At K = 0 every entry is COO's, and the ELL kernel still runs over every row (it applies
// beta): priced as the ell grid's smallest shape, 0.01 here, beside COO's 0.02. Without it the
// H100 suite's K = 0 candidates measured 1.4-1.6x their prediction (ani4, cryg2500: 8.6 us, two
// launches; 2026-12-07, model version 39's run).
TEST(HybModel, WidthZeroIsAllCooAfterTheEllKernelsLaunch) {
  const EllModel ell({ell_256()});
  const CooModel coo({coo_256()});
  const MatrixFeatures f = features_with({{1, 100}, {3, 50}, {10, 10}}, 1000);
  EXPECT_DOUBLE_EQ(HybModel(ell, coo).predict_ms(f, hyb_launch(256, 0), h100_like()).ms,
                   0.01 + 0.02);
  // K at the longest row leaves COO nothing: its kernel does not launch.
  EXPECT_DOUBLE_EQ(HybModel(ell, coo).predict_ms(f, hyb_launch(256, 10), h100_like()).ms,
                   0.02);
}

TEST(CooRowWriteExcessBytes, CountsTheRowWritesTheSamplesDidNotHave) {
  // Every row written, 8 entries each: what the samples did (2 x 8 bytes per 8 entries).
  EXPECT_DOUBLE_EQ(coo_row_write_excess_bytes(1024, 1024, 8192, 8, 8), 0.0);
  // One entry a row: 1024 rows read and written (256 sectors of 32 bytes, twice), less the
  // 128 rows' worth the fit holds.
  EXPECT_DOUBLE_EQ(coo_row_write_excess_bytes(1024, 1024, 1024, 8, 8), 16384.0 - 2048.0);
  // A quarter of the rows, scattered, fp32 (8 a sector): 1 - 0.75^8 of the 128 sectors.
  EXPECT_NEAR(coo_row_write_excess_bytes(1024, 256, 256, 4, 8),
              64.0 * 128.0 * (1.0 - std::pow(0.75, 8)) - 256.0, 1e-9);
  // Longer rows than the samples' write less: not credited.
  EXPECT_DOUBLE_EQ(coo_row_write_excess_bytes(100, 100, 10'000, 8, 8), 0.0);
  EXPECT_DOUBLE_EQ(coo_row_write_excess_bytes(0, 0, 0, 8, 8), 0.0);
}

TEST(ModelPredictor, AddsCooRowWritesBeyondTheSamplesAtTheBytesRate) {
  ModelSet set;  // fp64
  set.records.put(EllRecord{.variants = {ell_256()}});
  set.records.put(CooRecord{.variants = {coo_256()}});
  set.records.update<BytesRecord>([&](BytesRecord& r) {
    r.shared = BytesCalibration{
        .time_vs_bytes = {.intercept = 0.005, .slope = 1.0 / 3e9, .quality = perfect(1e6, 1e10)}};
  });
  const ModelPredictor predictor(set);
  const EllModel ell(set.records.find<EllRecord>()->variants);
  const CooModel coo(set.records.find<CooRecord>()->variants);
  // HYB of width 3: 10 of 160 rows go to COO with 70 entries, scattered among the 160.
  const MatrixFeatures f = features_with({{1, 100}, {3, 50}, {10, 10}}, 1000);
  const double hyb = HybModel(ell, coo).predict_ms(f, hyb_launch(256, 3), h100_like()).ms;
  const double excess = coo_row_write_excess_bytes(160, 10, 70, 8, kCooSampleRowLength);
  EXPECT_NEAR(excess, 64.0 * 40.0 * (1.0 - std::pow(15.0 / 16.0, 4)) - 140.0, 1e-9);
  EXPECT_DOUBLE_EQ(predictor.predict_ms(cuda_hyb, f, hyb_launch(256, 3), h100_like()).ms,
                   hyb + excess / 3e9);
  // Plain COO writes every row: 160 rows of 2.2 entries on average, against the samples' 8.
  const double coo_ms = coo.predict_ms(f, launch(256), h100_like()).ms;
  EXPECT_DOUBLE_EQ(predictor.predict_ms(cuda_coo, f, launch(256), h100_like()).ms,
                   coo_ms + coo_row_write_excess_bytes(160, 160, f.nnz, 8, 8) / 3e9);
  EXPECT_GT(coo_row_write_excess_bytes(160, 160, f.nnz, 8, 8), 0.0);
}

// A row's lanes walk its slots one after another: an ELL launch under a long row takes at least
// the latency stage's one-lane walk of it (F_1 + step x length / lanes), which the grid of rows
// of one length does not hold where a part is priced at the slots its warps walk on average
// (cuda_strip's ELL part).
TEST(ModelPredictor, HoldsAnEllLaunchAboveItsLongestRowsWalk) {
  ModelSet set;  // fp64
  set.records.put(EllRecord{.variants = {ell_256()}});
  CsrVectorCalibration scalar;
  scalar.kernel = kernel(256, 1);
  scalar.fixed_ms = 0.004;
  scalar.long_row_step_ms = 1e-4;
  set.records.put(CsrVectorRecord{.variants = {scalar}});
  const CudaEllRules cuda_ell;
  // 1000 rows of 2 under one of 1000 entries, priced at width 2.
  const MatrixFeatures f = features_with({{2, 1000}, {1000, 1}}, 5000);
  const ModelPredictor predictor(set);
  EXPECT_NEAR(predictor.predict_ms(cuda_ell, f, ell_launch(256, 2), h100_like()).ms,
              0.004 + 1e-4 * 1000, 1e-12);
  Candidate two_lanes = ell_launch(256, 2);
  two_lanes.launch.threads_per_row = 2;
  EXPECT_NEAR(predictor.predict_ms(cuda_ell, f, two_lanes, h100_like()).ms, 0.004 + 1e-4 * 500,
              1e-12);
  // Without a one-lane walk calibrated: the grid alone, far below the walk.
  ModelSet grid_only;
  grid_only.records.put(EllRecord{.variants = {ell_256()}});
  EXPECT_LT(ModelPredictor(grid_only).predict_ms(cuda_ell, f, ell_launch(256, 2), h100_like()).ms,
            0.03);
}

// Fig. 3: flat 0.05 ms below 8 non-zeros per row (the GPU underused), 0.01 + 0.005 c above;
// Fig. 4: 0.004 ms + 1e-6 ms per non-zero of a one-strip sample.
CsrVectorCalibration csr_vector_256x32() {
  CsrVectorCalibration c;
  c.kernel = kernel(256, 32, 32);
  c.sample_strips = 1;
  c.time_vs_row_length.threshold_x = 8;
  c.time_vs_row_length.below = {.c0 = 0.05, .c1 = 0, .c2 = 0, .quality = perfect(1, 7)};
  c.time_vs_row_length.above = {.intercept = 0.01, .slope = 0.005, .quality = perfect(8, 64)};
  c.time_vs_row_length.quality = perfect(1, 64);
  c.time_vs_sample_nnz = {.intercept = 0.004, .slope = 1e-6, .quality = perfect(8 * 8448.0, 64 * 8448.0)};
  return c;
}

TEST(CsrVectorModel, ExtendsShortRowsToTheLineOfEqualTime) {
  const CsrVectorCalibration c = csr_vector_256x32();
  // conic(2) = 0.05 = 0.01 + 0.005 * 8: a row of 2 costs as much as a row of 8.
  EXPECT_DOUBLE_EQ(CsrVectorModel::extended_row_length(c, 2), 8.0);
  EXPECT_DOUBLE_EQ(CsrVectorModel::extended_row_length(c, 20), 20.0);
}

TEST(CsrVectorModel, ChargesEachRowItsShareOfASampleOfItsLength) {
  const CsrVectorModel model({csr_vector_256x32()}, Precision::fp64);
  // Block 256, 32 registers: P = 8; a one-strip sample holds 132 * 8 * 256 / 32 = 8448 rows.
  // No samples kept: T(c) is the Fig. 3 fit, T(2) = 0.05 and T(20) = 0.01 + 0.005 * 20 = 0.11.
  // 5000 rows of each: (5000 * 0.05 + 5000 * 0.11) / 8448 ms.
  const MatrixFeatures f = features_with({{2, 5000}, {20, 5000}}, 10000);
  const Prediction p = model.predict_ms(f, launch(256, 32), h100_like());
  EXPECT_NEAR(p.ms, 800.0 / 8448.0, 1e-12);
  EXPECT_DOUBLE_EQ(p.confidence, 0.8);
}

TEST(CsrVectorModel, InterpolatesBetweenTheMeasuredSamples) {
  CsrVectorCalibration c = csr_vector_256x32();
  c.samples = {{1, 0.02}, {4, 0.05}, {8, 0.09}};
  EXPECT_DOUBLE_EQ(CsrVectorModel::sample_ms_at(c, 0.5), 0.02);  // held below the first
  EXPECT_NEAR(CsrVectorModel::sample_ms_at(c, 2), 0.03, 1e-15);
  EXPECT_NEAR(CsrVectorModel::sample_ms_at(c, 6), 0.07, 1e-15);
  // Past the longest sample: Fig. 3's line slope, 0.005 ms per unit of row length.
  EXPECT_NEAR(CsrVectorModel::sample_ms_at(c, 18), 0.09 + 0.05, 1e-15);
  // A matrix shaped like a sample predicts the sample's time.
  const CsrVectorModel model({c}, Precision::fp64);
  const MatrixFeatures f = features_with({{4, 8448}}, 8448);
  EXPECT_NEAR(model.predict_ms(f, launch(256, 32), h100_like()).ms, 0.05, 1e-12);
}

// nearest_calibration returns a variant of exactly the launch without computing distances:
// the same variant as the first of least variant_distance, over variants in any order (some
// repeated, some with an unknown shape) and launches calibrated or not.
TEST(NearestCalibration, AnExactVariantIsTheFirstOfLeastDistance) {
  std::vector<CsrVectorCalibration> variants(7);
  const int shapes[7][2] = {{256, 32}, {128, 4}, {512, 32}, {256, 4}, {0, 8}, {256, 32}, {128, 0}};
  for (std::size_t i = 0; i < variants.size(); ++i) {
    variants[i].kernel = kernel(shapes[i][0], shapes[i][1]);
    variants[i].sample_strips = static_cast<std::int64_t>(i);  // tells the variants apart
  }
  const std::span<const CsrVectorCalibration> all(variants);
  for (const std::uint32_t block : {0U, 64U, 128U, 256U, 512U, 1024U})
    for (const std::uint32_t lanes : {0U, 1U, 2U, 4U, 8U, 32U}) {
      std::size_t first_least = 0;
      for (std::size_t i = 1; i < variants.size(); ++i)
        if (variant_distance(variants[i].kernel, block, lanes) <
            variant_distance(variants[first_least].kernel, block, lanes))
          first_least = i;
      bool exact = false;
      const CsrVectorCalibration& found = nearest_calibration(all, block, lanes, "csr_vector", exact);
      EXPECT_EQ(found.sample_strips, variants[first_least].sample_strips)
          << "block " << block << ", lanes " << lanes;
      EXPECT_EQ(exact, variant_distance(variants[first_least].kernel, block, lanes) == 0.0);
    }
}

// sample_ms_at finds its segment by bisection (the models ask once per row length of every
// part a composed format prices): bit for bit the walk over the samples it replaced.
TEST(CsrVectorModel, SampleLookupByBisectionEqualsTheWalkOverTheSamples) {
  CsrVectorCalibration c = csr_vector_256x32();
  c.samples = {{1, 0.02}, {2, 0.021}, {4, 0.05}, {8, 0.09}, {16, 0.15}, {32, 0.31}, {64, 0.6}};
  const auto walked = [&c](double length) {
    const std::vector<SamplePoint>& s = c.samples;
    if (length <= s.front().x) return s.front().y;
    for (std::size_t i = 1; i < s.size(); ++i)
      if (length <= s[i].x)
        return s[i - 1].y + (length - s[i - 1].x) / (s[i].x - s[i - 1].x) * (s[i].y - s[i - 1].y);
    return s.back().y + c.time_vs_row_length.above.slope * (length - s.back().x);
  };
  for (double length = 0.25; length <= 100.0; length += 0.25)
    EXPECT_EQ(CsrVectorModel::sample_ms_at(c, length), walked(length)) << "length " << length;
}

TEST(CsrVectorModel, ScalesALargerSampleToTheBaseRowsKeepingTheFixedCostOnce) {
  // 10 strips of rows took 0.104 ms with a 0.004 ms fixed cost: one strip, 0.004 + 0.01.
  const SamplePoint one = csr_sample_at_rows({2, 0.104}, 2'703'360, 270'336, 0.004);
  EXPECT_DOUBLE_EQ(one.x, 2.0);
  EXPECT_NEAR(one.y, 0.014, 1e-15);
  EXPECT_DOUBLE_EQ(csr_sample_at_rows({2, 0.104}, 270'336, 270'336, 0.004).y, 0.104);
  // A sample faster than the fixed cost keeps only the fixed cost.
  EXPECT_DOUBLE_EQ(csr_sample_at_rows({2, 0.003}, 540'672, 270'336, 0.004).y, 0.004);
  EXPECT_THROW(csr_sample_at_rows({2, 0.1}, 0, 270'336, 0.004), Error);
}

TEST(CsrVectorModel, ALongRowCostsAtLeastItsCriticalPath) {
  CsrVectorCalibration c = csr_vector_256x32();
  c.long_row_step_ms = 1e-4;
  const CsrVectorModel model({c}, Precision::fp64);
  // One row of 6400 among 100 short ones: 6400 / 32 lanes = 200 steps of 1e-4 ms = 0.02 ms,
  // far above the throughput term (100 * 0.05 + 0.01 + 0.005 * 6400) / 8448 = 0.0044 ms.
  const MatrixFeatures f = features_with({{2, 100}, {6400, 1}}, 10000);
  EXPECT_NEAR(model.predict_ms(f, launch(256, 32), h100_like()).ms, 0.02, 1e-12);
  // With no long row the critical path (1 step) is below the throughput term.
  const MatrixFeatures short_rows = features_with({{2, 5000}, {20, 5000}}, 10000);
  EXPECT_NEAR(model.predict_ms(short_rows, launch(256, 32), h100_like()).ms, 800.0 / 8448.0,
              1e-12);
}

TEST(CsrVectorModel, ARowOfAMatrixBeyondL2StepsAtTheBeyondL2Step) {
  CsrVectorCalibration c = csr_vector_256x32();
  c.long_row_step_ms = 1e-4;
  c.long_row_step_beyond_l2_ms = 3e-4;
  const CsrVectorModel model({c}, Precision::fp64);
  // A row of 3.2M among 100 short ones, 100000 steps of 32 lanes, in a matrix of 12.8M
  // columns: x alone is 102 MB, beyond twice the 50 MB L2 of h100_like, so every step takes
  // the beyond-L2 0.3 us: 30 ms, far above the throughput term (~16000 / 8448 = 1.9 ms).
  const MatrixFeatures wide = features_with({{2, 100}, {3'200'000, 1}}, 12'800'000);
  EXPECT_NEAR(model.predict_ms(wide, launch(256, 32), h100_like()).ms, 30.0, 1e-9);
}

TEST(CsrVectorModel, ChargesTheFixedCostOnceAndSharesOnlyTheRest) {
  CsrVectorCalibration c = csr_vector_256x32();
  c.samples = {{1, 0.02}, {4, 0.05}, {8, 0.09}};
  c.fixed_ms = 0.01;
  const CsrVectorModel model({c}, Precision::fp64);
  // A sample-shaped matrix still predicts the sample: 0.01 + 8448 * (0.05 - 0.01) / 8448.
  EXPECT_NEAR(model.predict_ms(features_with({{4, 8448}}, 8448), launch(256, 32), h100_like()).ms,
              0.05, 1e-12);
  // 10x the rows: the fixed cost once, not ten times: 0.01 + 10 * 0.04 (not 10 * 0.05).
  const Prediction ten = model.predict_ms(features_with({{4, 84480}}, 84480), launch(256, 32),
                                          h100_like());
  EXPECT_NEAR(ten.ms, 0.41, 1e-12);
  EXPECT_TRUE(ten.includes_fixed_cost);
  // Without a measured fixed cost the shares keep it (model version 5).
  c.fixed_ms = 0.0;
  EXPECT_NEAR(CsrVectorModel({c}, Precision::fp64).predict_ms(features_with({{4, 84480}}, 84480), launch(256, 32),
                                             h100_like())
                  .ms,
              0.5, 1e-12);
}

TEST(SmoothFloor, NeverGoesBelowTheLaunchFloorAndKeepsTheOrder) {
  EXPECT_DOUBLE_EQ(smooth_floor_ms(0.0, 0.005), 0.005);
  EXPECT_NEAR(smooth_floor_ms(0.005, 0.005), 0.005 * std::pow(2.0, 0.25), 1e-15);
  EXPECT_LT(smooth_floor_ms(0.001, 0.005), smooth_floor_ms(0.002, 0.005));
  EXPECT_NEAR(smooth_floor_ms(1.0, 0.005), 1.0, 1e-9);
  EXPECT_DOUBLE_EQ(smooth_floor_ms(0.001, 0.0), 0.001);  // not calibrated: unchanged
}

TEST(CsrVectorModel, RefusesABlockThatCannotLaunch) {
  CsrVectorCalibration c = csr_vector_256x32();
  c.kernel.resources.registers_per_thread = 255;
  const CsrVectorModel model({c}, Precision::fp64);
  const MatrixFeatures f = features_with({{2, 5000}}, 10000);
  EXPECT_THROW(model.predict_ms(f, launch(1024, 32), h100_like()), Error);
}

TEST(CsrVectorModel, FitsBothCurvesFromRowLengthSamples) {
  const CsrVectorCalibration shape = csr_vector_256x32();
  std::vector<SamplePoint> samples;
  for (double c = 1; c <= 64; ++c) {
    samples.push_back({c, c < 8 ? 0.05 - 0.004 * (8 - c) * (8 - c) / 49.0 : shape.time_vs_row_length(c)});
  }
  const CsrVectorCalibration fitted = fit_csr_vector(kernel(256, 32), samples, 8448);
  EXPECT_EQ(fitted.time_vs_row_length.threshold_x, 8.0);
  EXPECT_NEAR(fitted.time_vs_sample_nnz.slope, 0.005 / 8448, 1e-15);
  EXPECT_NEAR(fitted.time_vs_sample_nnz.intercept, 0.01, 1e-12);
  EXPECT_EQ(fitted.time_vs_sample_nnz.quality.sample_count, 57u);
  EXPECT_EQ(fitted.samples, samples);  // kept for plots of measured points against the fit
}

TEST(BytesModel, CountsXOnceWhenItFitsInL2) {
  // 1000 x 1000, 5000 non-zeros, fp64: CSR 1001 * 4 + 5000 * 12 = 64004 bytes, x 8000, y 8000.
  MatrixFeatures f;
  f.rows = 1000;
  f.cols = 1000;
  f.nnz = 5000;
  f.mean_row_span_fraction = 0.25;
  const BytesMoved moved =
      bytes_moved(f, csr_storage_bytes_estimate(f, Precision::fp64), h100_like(), Precision::fp64, 0.5);
  EXPECT_EQ(moved.matrix_bytes, 64004u);
  EXPECT_EQ(moved.x_bytes, 8000u);
  EXPECT_EQ(moved.y_bytes, 8000u);
  const BytesCalibration cal{.time_vs_bytes = {.intercept = 0.005, .slope = 1.0 / 3e9,
                                                .quality = perfect(1e6, 1e10)}};
  const Prediction p = BytesModel(cal, Precision::fp64).predict_ms(f, launch(256), h100_like());
  EXPECT_DOUBLE_EQ(p.ms, 0.005 + 80004.0 / 3e9);
  EXPECT_DOUBLE_EQ(p.confidence, 0.3);
}

TEST(BytesModel, ScalesTheGatherExcessByRowSpanWhenXMissesL2) {
  MatrixFeatures f;
  f.rows = 1000;
  f.cols = 1000;
  f.nnz = 5000;
  f.mean_row_span_fraction = 0.25;
  DeviceInfo small_l2 = h100_like();
  small_l2.l2_bytes = 1000;
  // x once 8000; random gathers 5000 * 32 = 160000; excess 152000 * 0.25 = 38000.
  EXPECT_EQ(bytes_moved(f, 0, small_l2, Precision::fp64, 0.5).x_bytes, 46000u);
}

TEST(ModelPredictor, FallsBackToTheBytesModelForUncalibratedFamilies) {
  ModelSet set;
  set.records.update<BytesRecord>([&](BytesRecord& r) {
    r.shared = BytesCalibration{
        .time_vs_bytes = {.intercept = 0.005, .slope = 1.0 / 3e9, .quality = perfect(1e6, 1e10)}};
  });
  const ModelPredictor predictor(set);
  MatrixFeatures f;
  f.rows = 1000;
  f.cols = 1000;
  f.nnz = 5000;
  const Prediction p = predictor.predict_ms(cuda_csr_vector, f, launch(256, 32), h100_like(), 1000);
  EXPECT_DOUBLE_EQ(p.ms, 0.005 + (1000.0 + 8000 + 8000) / 3e9);
  EXPECT_DOUBLE_EQ(p.confidence, 0.3);
}

// A format naming a family that models/families/registry.cpp does not register.
class UnknownFamilyRules final : public FormatRules {
 public:
  FormatId id() const noexcept override { return FormatId{60000}; }
  std::string_view name() const noexcept override { return "unknown_family"; }
  bool needs_gpu() const noexcept override { return true; }
  std::string_view model_family() const noexcept override { return "no_such_family"; }
  bool admissible(const MatrixFeatures&, const DeviceInfo&, Precision,
                  std::uint64_t) const override {
    return true;
  }
  std::vector<Candidate> candidates(const MatrixFeatures&, const DeviceInfo&) const override {
    return {};
  }
  std::uint64_t device_bytes(const MatrixFeatures&, Precision, const Candidate&) const override {
    return 0;
  }
};

TEST(ModelPredictor, FallsBackToTheBytesModelForAFamilyNobodyRegistered) {
  ModelSet set;
  set.records.update<BytesRecord>([&](BytesRecord& r) {
    r.shared = BytesCalibration{
        .time_vs_bytes = {.intercept = 0.005, .slope = 1.0 / 3e9, .quality = perfect(1e6, 1e10)}};
  });
  const ModelPredictor predictor(set);
  MatrixFeatures f;
  f.rows = 1000;
  f.cols = 1000;
  f.nnz = 5000;
  const Prediction p =
      predictor.predict_ms(UnknownFamilyRules{}, f, launch(256, 32), h100_like(), 1000);
  EXPECT_DOUBLE_EQ(p.ms, 0.005 + (1000.0 + 8000 + 8000) / 3e9);
  try {
    ModelPredictor(ModelSet{}).predict_ms(UnknownFamilyRules{}, f, launch(256), h100_like());
    FAIL() << "expected Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::failed_precondition);
    EXPECT_STREQ(e.what(),
                 "no calibrated model for format family no_such_family and no bytes "
                 "model to fall back on");
  }
}

TEST(ModelPredictor, UsesTheDedicatedModelWhereCalibrated) {
  ModelSet set;
  set.records.put(CooRecord{.variants = {coo_256()}});
  const ModelPredictor predictor(set);
  MatrixFeatures f;
  f.nnz = 2'000'000;
  EXPECT_DOUBLE_EQ(predictor.predict_ms(cuda_coo, f, launch(256), h100_like()).ms, 2.01);
}

TEST(ModelPredictor, HoldsEveryPredictionAboveTheLaunchFloor) {
  ModelSet set;
  set.records.put(CooRecord{.variants = {coo_256()}});
  set.launch_floor_ms = 0.02;
  const ModelPredictor predictor(set);
  MatrixFeatures f;
  f.nnz = 10'000;  // the COO line: 0.01 + 1e-6 * 1e4 = 0.02 ms, right at the floor
  EXPECT_DOUBLE_EQ(predictor.predict_ms(cuda_coo, f, launch(256), h100_like()).ms,
                   smooth_floor_ms(0.02, 0.02));
  EXPECT_GT(predictor.predict_ms(cuda_coo, f, launch(256), h100_like()).ms, 0.02);
}

TEST(ModelPredictor, NamesTheFamilyWhenNothingCanPredict) {
  const ModelPredictor predictor(ModelSet{});
  try {
    predictor.predict_ms(cuda_hyb, MatrixFeatures{}, launch(256), h100_like());
    FAIL() << "expected Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::failed_precondition);
    EXPECT_STREQ(e.what(),
                 "no calibrated model for format family hyb and no bytes model to fall back on");
  }
}

}  // namespace
}  // namespace spmvd
