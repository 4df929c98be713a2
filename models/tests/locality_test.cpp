#include "models/locality.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "kernels/formats/cuda_csr_scalar/cuda_csr_scalar_rules.hpp"
#include "kernels/formats/cuda_ell/cuda_ell_rules.hpp"
#include "kernels/formats/cuda_hyb/cuda_hyb_rules.hpp"
#include "kernels/formats/cuda_sell/cuda_sell_features.hpp"
#include "kernels/formats/cuda_sell/cuda_sell_rules.hpp"
#include "kernels/formats/cusparse_bsr/cusparse_bsr_features.hpp"
#include "kernels/formats/cusparse_bsr/cusparse_bsr_rules.hpp"
#include "kernels/formats/cusparse_sell/cusparse_sell_rules.hpp"
#include "models/families/bytes/bytes_record.hpp"
#include "models/families/coo/coo_record.hpp"
#include "models/families/csr_vector/csr_vector_record.hpp"
#include "models/families/ell/ell_record.hpp"
#include "models/model_predictor.hpp"
#include "models/tests/test_device.hpp"

namespace spmvd {
namespace {

using testing_support::h100_like;

// rows x rows, every row of `length`, spanning `span` of x on average, and gathering x as
// randomly as that span says (its sectors between a band's and random columns').
MatrixFeatures rows_of(std::int64_t rows, std::int64_t length, double span) {
  MatrixFeatures f;
  f.rows = f.cols = rows;
  f.nnz = rows * length;
  f.row_length_min = f.row_length_max = length;
  f.row_length_mean = static_cast<double>(length);
  f.distribution = {{length, rows}};
  f.mean_row_span_fraction = span;
  const double banded = banded_sectors_per_nonzero(static_cast<double>(length));
  const double random =
      random_sectors_per_nonzero(static_cast<double>(length), static_cast<double>(rows));
  f.x_sectors_per_nonzero = banded + x_span_randomness(f) * (random - banded);
  return f;
}

// Formats the predictor is asked for, each of the bytes family but cuda_csr_scalar.
const CudaCsrScalarRules cuda_csr_scalar;
const CudaSellRules cuda_sell;
const CusparseSellRules cusparse_sell;
const CusparseBsrRules cusparse_bsr;

Candidate sell_candidate(std::uint32_t sort_window) {
  return Candidate{
      .format = kCudaSellFormatId,
      .params = FieldSet::of(CudaSellParams{.slice_height = 32, .sort_window = sort_window}),
      .launch = {.block_size = 128, .threads_per_row = 1, .grid_size = 1}};
}

FormatParams bsr_params(std::uint32_t block_dim) {
  return FieldSet::of(
      CusparseBsrParams{.library_algorithm = kCusparseSpmvBsrAlg1, .block_dim = block_dim});
}

Candidate bsr_candidate(std::uint32_t block_dim) {
  return Candidate{.format = kCusparseBsrFormatId, .params = bsr_params(block_dim), .launch = {}};
}

// cusparse_bsr's own features counting `blocks` blocks of block_dim.
FieldSet bsr_blocks(std::int64_t block_dim, std::int64_t blocks) {
  return FieldSet::of(CusparseBsrFeatures{.block_dims = {block_dim}, .blocks = {blocks}});
}

TEST(RandomSpanFraction, IsTheExpectedRangeOfUniformColumns) {
  EXPECT_DOUBLE_EQ(random_span_fraction(1.0), 0.0);
  EXPECT_DOUBLE_EQ(random_span_fraction(3.0), 0.5);
  EXPECT_DOUBLE_EQ(random_span_fraction(9.0), 0.8);
}

TEST(XSpanRandomness, IsOneForRandomRowsAndNearZeroForABand) {
  // 8 random columns span 7/9 of x on average: as random as the calibration samples.
  EXPECT_DOUBLE_EQ(x_span_randomness(rows_of(100000, 8, 7.0 / 9.0)), 1.0);
  EXPECT_DOUBLE_EQ(x_span_randomness(rows_of(100000, 8, 0.95)), 1.0);  // clamped
  // A band of 8 columns spans 8 / 100000.
  EXPECT_NEAR(x_span_randomness(rows_of(100000, 8, 8e-5)), 8e-5 * 9.0 / 7.0, 1e-12);
  // Half the random span: half random.
  EXPECT_DOUBLE_EQ(x_span_randomness(rows_of(100000, 8, 0.5 * 7.0 / 9.0)), 0.5);
  // One entry per row: the span says nothing, the random calibration stands.
  EXPECT_DOUBLE_EQ(x_span_randomness(rows_of(100000, 1, 1e-5)), 1.0);
}

TEST(RandomSectorsPerNonzero, IsTheExpectedDistinctSectorsOfUniformColumns) {
  // 2 sectors (16 columns), a group of 32 draws: 2 (1 - 2^-32) of them distinct, per 32.
  EXPECT_NEAR(random_sectors_per_nonzero(1.0, 16.0), 2.0 * (1.0 - std::pow(0.5, 32)) / 32.0,
              1e-15);
  // Many sectors: nearly every draw its own.
  EXPECT_NEAR(random_sectors_per_nonzero(8.0, 1e8), 1.0, 1e-4);
}

TEST(BandedSectorsPerNonzero, CountsTheSectorsOfTheGroupsConsecutiveColumns) {
  // 32 rows of 8: 39 consecutive columns, (39 + 7) / 8 sectors for 256 non-zeros.
  EXPECT_DOUBLE_EQ(banded_sectors_per_nonzero(8.0), 46.0 / 8.0 / 256.0);
  EXPECT_DOUBLE_EQ(banded_sectors_per_nonzero(1.0), 39.0 / 8.0 / 32.0);
}

TEST(XGatherRandomness, PlacesTheMatrixBetweenABandAndRandomColumns) {
  MatrixFeatures f = rows_of(1'000'000, 8, 1e-5);
  const double random = random_sectors_per_nonzero(8.0, 1e6);
  const double banded = banded_sectors_per_nonzero(8.0);
  f.x_sectors_per_nonzero = random;
  EXPECT_DOUBLE_EQ(x_gather_randomness(f), 1.0);
  f.x_sectors_per_nonzero = banded;
  EXPECT_DOUBLE_EQ(x_gather_randomness(f), 0.0);
  f.x_sectors_per_nonzero = 0.5 * (random + banded);
  EXPECT_NEAR(x_gather_randomness(f), 0.5, 1e-12);
  // Blocks of random columns along the diagonal: a tiny span, random gathers all the same.
  f.x_sectors_per_nonzero = 0.95;
  EXPECT_LT(x_span_randomness(f), 0.01);
  EXPECT_GT(x_gather_randomness(f), 0.9);
  // Always measured (features stored before tuner version 4 are re-tuned): the span, however
  // random, no longer stands in for the sectors.
  MatrixFeatures spread = rows_of(1'000'000, 8, 1.0);
  spread.x_sectors_per_nonzero = banded;
  EXPECT_DOUBLE_EQ(x_span_randomness(spread), 1.0);
  EXPECT_DOUBLE_EQ(x_gather_randomness(spread), 0.0);
  // 16 columns: random and banded gathers touch the same two sectors, nothing to tell apart.
  MatrixFeatures narrow = rows_of(16, 8, 0.5);
  narrow.x_sectors_per_nonzero = 0.0;
  EXPECT_DOUBLE_EQ(x_gather_randomness(narrow), 1.0);
}

TEST(XGatherRandomness, ASortedWindowGathersInItsSortedOrder) {
  MatrixFeatures f = rows_of(1'000'000, 8, 1e-5);
  const double random = random_sectors_per_nonzero(8.0, 1e6);
  const double banded = banded_sectors_per_nonzero(8.0);
  f.x_sectors_per_nonzero = banded;
  f.format_features["cuda_sell"] =
      FieldSet::of(CudaSellFeatures{.sort_windows = {256, 1'000'000},
                                    .sorted_sectors_per_nonzero = {banded, random},
                                    .sorted_slots_32 = {8'000'000, 8'000'000},
                                    .sorted_slots_64 = {8'000'000, 8'000'000}});
  const auto sorted = [&f](std::int64_t window) {
    return x_gather_randomness(f, sorted_sectors_per_nonzero(f, window));
  };
  EXPECT_DOUBLE_EQ(sorted(1), 0.0);    // no sort: the band
  EXPECT_DOUBLE_EQ(sorted(256), 0.0);  // rows stay among their neighbours
  EXPECT_DOUBLE_EQ(sorted(1'000'000), 1.0);
  EXPECT_DOUBLE_EQ(sorted(1LL << 40), 1.0);  // any window >= rows: the whole
  // As cuda_sell's candidates gather (FormatRules::gather_sectors_per_nonzero).
  EXPECT_DOUBLE_EQ(
      x_gather_randomness(f, cuda_sell.gather_sectors_per_nonzero(f, sell_candidate(1'000'000))),
      1.0);
  EXPECT_DOUBLE_EQ(
      x_gather_randomness(f, cuda_sell.gather_sectors_per_nonzero(f, sell_candidate(1))), 0.0);
  // A window not measured, or features without cuda_sell's own: the unsorted order.
  EXPECT_DOUBLE_EQ(sorted(4096), 0.0);
  f.format_features.erase("cuda_sell");
  EXPECT_DOUBLE_EQ(sorted(1'000'000), 0.0);
}

TEST(BandedRatioAt, InterpolatesHoldsItsEndsAndIsOneWithoutCalibration) {
  const std::vector<SamplePoint> ratio{{2, 0.6}, {8, 0.4}, {32, 0.7}};
  EXPECT_DOUBLE_EQ(banded_ratio_at({}, 5.0), 1.0);
  EXPECT_DOUBLE_EQ(banded_ratio_at(ratio, 1.0), 0.6);
  EXPECT_NEAR(banded_ratio_at(ratio, 5.0), 0.5, 1e-15);
  EXPECT_NEAR(banded_ratio_at(ratio, 20.0), 0.55, 1e-15);
  EXPECT_DOUBLE_EQ(banded_ratio_at(ratio, 64.0), 0.7);
  // A broken sample cannot zero every prediction.
  const std::vector<SamplePoint> broken{{8, 0.0}};
  EXPECT_DOUBLE_EQ(banded_ratio_at(broken, 8.0), 0.05);
}

TEST(LocalityFactor, InterpolatesBetweenTheBandedAndTheRandomCalibration) {
  const std::vector<SamplePoint> ratio{{8, 0.4}};
  EXPECT_DOUBLE_EQ(locality_factor(ratio, 8.0, 0.0), 0.4);
  EXPECT_DOUBLE_EQ(locality_factor(ratio, 8.0, 1.0), 1.0);
  EXPECT_DOUBLE_EQ(locality_factor(ratio, 8.0, 0.5), 0.7);
}

CsrVectorCalibration csr_with_samples() {
  CsrVectorCalibration c;
  c.kernel = {.resources = {.threads_per_block = 256, .registers_per_thread = 32},
              .threads_per_row = 32};
  c.time_vs_row_length.threshold_x = 1;
  c.time_vs_row_length.above = {.intercept = 0.01, .slope = 0.005, .quality = {}};
  c.samples = {{1, 0.02}, {4, 0.05}, {8, 0.09}};
  c.banded_ratio = {{2, 0.5}, {8, 0.3}};
  return c;
}

TEST(CsrVectorModel, ScalesABandedMatrixByTheBandedRatioAtItsRowLength) {
  const CsrVectorModel model({csr_with_samples()}, Precision::fp64);
  Candidate c;
  c.launch = {.block_size = 256, .threads_per_row = 32, .grid_size = 0};
  // A sample-shaped matrix (8448 rows of 4) predicts the sample, 0.05 ms, when random...
  const MatrixFeatures random = rows_of(8448, 4, 3.0 / 5.0);
  EXPECT_NEAR(model.predict_ms(random, c, h100_like()).ms, 0.05, 1e-12);
  // ...and the sample times rho(4) = 0.5 + (0.3 - 0.5) * 2 / 6 when it is a band.
  const MatrixFeatures band = rows_of(8448, 4, 0.0);
  EXPECT_NEAR(model.predict_ms(band, c, h100_like()).ms, 0.05 * (0.5 - 0.2 / 3.0), 1e-12);
}

TEST(EllModel, ScalesABandedMatrixByTheBandedRatioAtItsWidthAndRows) {
  LogGridFit grid;
  grid.widths = {1, 10};
  grid.rows = {1e3, 1e5};
  grid.log_ms = {std::log(0.01), std::log(0.02), std::log(0.1), std::log(1.0)};
  // A band pays at many rows (0.4 at width 10), hardly at a few (0.9).
  LogGridFit banded;
  banded.widths = {10};
  banded.rows = {1e3, 1e5};
  banded.log_ms = {std::log(0.9), std::log(0.4)};
  const EllModel model({{.kernel = {.resources = {.threads_per_block = 256}, .threads_per_row = 1},
                         .time_vs_width_rows = grid,
                         .banded_ratio_vs_width_rows = banded}});
  EXPECT_NEAR(model.predict_shape_ms(10, 100000, 256, 1.0).ms, 1.0, 1e-12);
  EXPECT_NEAR(model.predict_shape_ms(10, 100000, 256, 0.0).ms, 0.4, 1e-12);
  EXPECT_NEAR(model.predict_shape_ms(10, 100000, 256, 0.5).ms, 0.7, 1e-12);
  EXPECT_NEAR(model.predict_shape_ms(10, 1000, 256, 0.0).ms, 0.02 * 0.9, 1e-12);
  // Between the rows: geometric, sqrt(0.9 * 0.4) = 0.6 at 1e4 rows.
  EXPECT_NEAR(model.predict_shape_ms(10, 10000, 256, 0.0).ms, std::sqrt(0.02 * 1.0) * 0.6, 1e-12);
}

TEST(ModelPredictor, PricesAFormatWithItsOwnBytesFitWhereCalibrated) {
  ModelSet set;
  set.records.update<BytesRecord>([&](BytesRecord& r) {
    r.shared =
        BytesCalibration{.time_vs_bytes = {.intercept = 0.005, .slope = 1.0 / 3e9, .quality = {}}};
  });
  const FormatId sell{10};
  const FormatId other{11};
  set.records.update<BytesRecord>([&](BytesRecord& r) {
    r.formats = {
        {.format = sell,
         .bytes = {.time_vs_bytes = {.intercept = 0.002, .slope = 1.0 / 1e9, .quality = {}},
                   .banded_ratio = {{1e3, 0.5}}}}};
  });
  const ModelPredictor predictor(set);
  MatrixFeatures f = rows_of(1000, 5, 1.0);
  Candidate c;
  c.format = sell;
  // 1000 matrix bytes + x 8000 + y 8000 at the format's own 1 GB/s; random rows: factor 1.
  EXPECT_DOUBLE_EQ(predictor.predict_ms(cusparse_sell, f, c, h100_like(), 1000).ms,
                   0.002 + 17000.0 / 1e9);
  // A band: the format's own banded ratio.
  f = rows_of(1000, 5, 0.0);
  EXPECT_DOUBLE_EQ(predictor.predict_ms(cusparse_sell, f, c, h100_like(), 1000).ms,
                   0.5 * (0.002 + 17000.0 / 1e9));
  // Another format keeps the shared fit, which has no banded calibration.
  c = bsr_candidate(4);
  ASSERT_EQ(c.format, other);
  EXPECT_DOUBLE_EQ(predictor.predict_ms(cusparse_bsr, f, c, h100_like(), 1000).ms,
                   0.005 + 17000.0 / 3e9);
}

TEST(ModelPredictor, BoundsAFormatByItsFloorPlusTheCriticalPathOfItsLongestRow) {
  ModelSet set;
  set.launch_floor_ms = 0.001;
  const FormatId sell{8};
  set.records.update<BytesRecord>([&](BytesRecord& r) {
    r.formats = {
        {.format = sell,
         .bytes = {.time_vs_bytes = {.intercept = 0.002, .slope = 1.0 / 1e9, .quality = {}}},
         .long_row_step_ms = 1e-4,
         .long_row_step_beyond_l2_ms = 3e-4,
         .floor_ms = 0.0012}};
  });
  const ModelPredictor predictor(set);
  const Candidate c = sell_candidate(1);
  ASSERT_EQ(c.format, sell);
  MatrixFeatures f = rows_of(1000, 5, 1.0);
  const double throughput = smooth_floor_ms(0.002 + 17000.0 / 1e9, 0.0012);
  // Rows of 5: the bytes decide (5 steps of 0.1 us on the 1.2 us floor are less).
  EXPECT_DOUBLE_EQ(predictor.predict_ms(cuda_sell, f, c, h100_like(), 1000).ms, throughput);
  // One row of 3000: after the launch's own 1.2 us, one thread walks it, 3000 steps of 0.1 us.
  f.row_length_max = 3000;
  EXPECT_NEAR(predictor.predict_ms(cuda_sell, f, c, h100_like(), 1000).ms, 0.0012 + 0.3, 1e-12);
  // The same row in a matrix 4x the L2: its steps stream from DRAM, 0.3 us each.
  const auto beyond_l2 = 4 * h100_like().l2_bytes;
  EXPECT_NEAR(predictor.predict_ms(cuda_sell, f, c, h100_like(), beyond_l2).ms, 0.0012 + 0.9,
              1e-12);
}

TEST(ModelPredictor, HoldsAFormatAboveItsOwnFloor) {
  ModelSet set;
  set.launch_floor_ms = 0.005;
  const FormatId bsr{11};
  set.records.update<BytesRecord>([&](BytesRecord& r) {
    r.formats = {{.format = bsr,
                  .bytes = {.time_vs_bytes = {.intercept = 0.0, .slope = 1.0 / 1e9, .quality = {}}},
                  .floor_ms = 0.02}};
  });
  const ModelPredictor predictor(set);
  const Candidate c = bsr_candidate(4);
  ASSERT_EQ(c.format, bsr);
  const double ms = predictor.predict_ms(cusparse_bsr, rows_of(10, 5, 1.0), c, h100_like(), 100).ms;
  EXPECT_GE(ms, 0.02);
  EXPECT_LT(ms, 0.0201);
}

TEST(ModelPredictor, ScalesAFormatByItsMeasuredRefitFactorLastAndOnlyThatFormat) {
  ModelSet set;
  set.launch_floor_ms = 0.005;
  const FormatId bsr{11};
  set.records.update<BytesRecord>([&](BytesRecord& r) {
    r.formats = {{.format = bsr,
                  .bytes = {.time_vs_bytes = {.intercept = 0.0, .slope = 1.0 / 1e9, .quality = {}}},
                  .floor_ms = 0.02}};
  });
  set.records.update<BytesRecord>([&](BytesRecord& r) {
    r.shared =
        BytesCalibration{.time_vs_bytes = {.intercept = 0.001, .slope = 1.0 / 2e9, .quality = {}}};
  });
  set.measured_refit = {{.format = bsr, .factor = 1.5, .sample_count = 9}};
  const std::string without[] = {"measured_refit"};
  const ModelPredictor refitted(set);
  const ModelPredictor base(set, without);
  const Candidate c = bsr_candidate(4);
  ASSERT_EQ(c.format, bsr);
  const MatrixFeatures f = rows_of(100000, 5, 1.0);
  const double base_ms = base.predict_ms(cusparse_bsr, f, c, h100_like(), 1 << 24).ms;
  // After the floor (0.02 ms): the factor scales the whole prediction it was fitted against.
  EXPECT_DOUBLE_EQ(refitted.predict_ms(cusparse_bsr, f, c, h100_like(), 1 << 24).ms,
                   1.5 * base_ms);
  // A format without a factor is unchanged.
  const Candidate sell = sell_candidate(1);
  EXPECT_DOUBLE_EQ(refitted.predict_ms(cuda_sell, f, sell, h100_like(), 1 << 24).ms,
                   base.predict_ms(cuda_sell, f, sell, h100_like(), 1 << 24).ms);
}

TEST(ModelPredictor, HoldsACsrCandidateAboveItsLongestRowUnderTheCacheResidentCorrection) {
  ModelSet set;
  set.precision = Precision::fp64;
  CsrVectorCalibration csr = csr_with_samples();
  csr.kernel.threads_per_row = 1;
  csr.fixed_ms = 0.004;
  csr.long_row_step_ms = 1e-4;  // 0.1 us a step: a 50-long row takes 5 us after the launch
  set.records.put(CsrVectorRecord{.variants = {csr}});
  Candidate c{.format = kCudaCsrScalarFormatId,
              .params = {},
              .launch = {.block_size = 256, .threads_per_row = 1, .grid_size = 0}};
  // 2000 rows of 2 and one of 50, in L2.
  MatrixFeatures f = rows_of(2000, 2, 1.0);
  f.distribution = {{2, 1999}, {50, 1}};
  f.row_length_max = 50;
  f.nnz = 1999 * 2 + 50;
  const DeviceInfo device = h100_like();
  const ModelPredictor plain(set);
  const double critical_path = 0.004 + 50 * 1e-4;
  EXPECT_GE(plain.predict_ms(cuda_csr_scalar, f, c, device).ms, critical_path - 1e-12);
  // kappa 0.25 everywhere (clamp's lowest): the throughput part shrinks, the walk does not.
  const GridSample grid[] = {{.width = 2, .rows = 1000, .ms = 0.25},
                             {.width = 32, .rows = 1000, .ms = 0.25},
                             {.width = 2, .rows = 100000, .ms = 0.25},
                             {.width = 32, .rows = 100000, .ms = 0.25}};
  set.cache_resident = {{.format = kCudaCsrScalarFormatId,
                         .params = {},
                         .block_size = 256,
                         .threads_per_row = 1,
                         .ratio_vs_length_rows = fit_log_grid(grid),
                         .largest_footprint_bytes = 5e6}};
  const ModelPredictor corrected(set);
  EXPECT_NEAR(corrected.predict_ms(cuda_csr_scalar, f, c, device).ms, critical_path, 1e-12);
}

TEST(BlockRowFactor, InterpolatesInLogBlocksPerBlockRowAndHoldsItsEnds) {
  FormatBytesCalibration own{.format = kCusparseBsrFormatId, .params = {}, .bytes = {}};
  own.block_row_ratio = {{2, 1.0}, {8, 0.7}, {32, 0.5}};
  MatrixFeatures f = rows_of(4000, 16, 1.0);
  f.format_features["cusparse_bsr"] = bsr_blocks(4, 1000 * 4);  // 1000 block rows of 4 blocks
  // 4 blocks per block row: halfway from 2 to 8 in log.
  EXPECT_NEAR(block_row_factor(own, f, bsr_candidate(4)), 0.85, 1e-12);
  f.format_features["cusparse_bsr"] = bsr_blocks(4, 1000 * 64);
  EXPECT_DOUBLE_EQ(block_row_factor(own, f, bsr_candidate(4)), 0.5);
  f.format_features["cusparse_bsr"] = bsr_blocks(4, 1000);
  EXPECT_DOUBLE_EQ(block_row_factor(own, f, bsr_candidate(4)), 1.0);
  // Blocks not counted at this size, no block size, or no ratio: 1.
  EXPECT_DOUBLE_EQ(block_row_factor(own, f, bsr_candidate(2)), 1.0);
  EXPECT_DOUBLE_EQ(block_row_factor(own, f, bsr_candidate(0)), 1.0);
  EXPECT_DOUBLE_EQ(block_row_factor(FormatBytesCalibration{}, f, bsr_candidate(4)), 1.0);
  // Features without BSR's own (its hook did not run): 1.
  f.format_features.erase("cusparse_bsr");
  EXPECT_DOUBLE_EQ(block_row_factor(own, f, bsr_candidate(4)), 1.0);
}

TEST(BlockRowFactor, RefusesACandidateThatIsNotBsrsNamingTheField) {
  FormatBytesCalibration own{.format = kCusparseBsrFormatId, .params = {}, .bytes = {}};
  own.block_row_ratio = {{2, 1.0}, {32, 0.5}};
  MatrixFeatures f = rows_of(4000, 16, 1.0);
  f.format_features["cusparse_bsr"] = bsr_blocks(4, 1000 * 4);
  try {
    block_row_factor(own, f, sell_candidate(256));
    FAIL() << "read cuda_sell's parameters as cusparse_bsr's";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    EXPECT_STREQ(e.what(), "cusparse_bsr: field 'library_algorithm' is missing");
  }
}

TEST(ModelPredictor, ScalesBsrByItsBlockRowRatio) {
  ModelSet set;
  const FormatId bsr{11};
  set.records.update<BytesRecord>([&](BytesRecord& r) {
    r.formats = {{.format = bsr,
                  .params = bsr_params(4),
                  .bytes = {.time_vs_bytes = {.intercept = 0.0, .slope = 1e-9, .quality = {}}},
                  .block_row_ratio = {{2, 1.0}, {32, 0.5}}}};
  });
  const ModelPredictor predictor(set);
  const Candidate c = bsr_candidate(4);
  MatrixFeatures f = rows_of(1 << 20, 128, 1.0);
  const double unscaled = predictor.predict_ms(cusparse_bsr, f, c, h100_like(), 1 << 30).ms;
  f.format_features["cusparse_bsr"] = bsr_blocks(4, (1 << 18) * 32);  // 32 a block row
  EXPECT_NEAR(predictor.predict_ms(cusparse_bsr, f, c, h100_like(), 1 << 30).ms, 0.5 * unscaled,
              1e-9);
}

// In L2 a BSR block row's blocks are a chain: the record's line at the mean blocks per block
// row holds the time from below, where it exceeds the bytes' prediction; none without a line,
// and --without bsr_block_row_chain leaves it out.
TEST(ModelPredictor, HoldsBsrAboveItsBlockRowChain) {
  FormatBytesCalibration own{.format = kCusparseBsrFormatId,
                             .params = bsr_params(4),
                             .bytes = {.time_vs_bytes = {.intercept = 0.0, .slope = 1e-12,
                                                         .quality = {}}}};
  own.floor_ms = 0.007;  // the tiny sample: ~8 blocks a block row of chain
  EXPECT_DOUBLE_EQ(own_floor_ms(own), 0.007) << "no chain: the tiny sample's time";
  own.block_row_chain = {.intercept = 0.004, .slope = 0.0005, .quality = {}};
  EXPECT_DOUBLE_EQ(own_floor_ms(own), 0.004) << "the chain's intercept";
  MatrixFeatures f = rows_of(4000, 16, 1.0);
  f.format_features["cusparse_bsr"] = bsr_blocks(4, 1000 * 20);  // 1000 block rows of 20
  EXPECT_DOUBLE_EQ(block_row_chain_ms(own, f, bsr_candidate(4)), 0.004 + 20 * 0.0005);
  EXPECT_DOUBLE_EQ(block_row_chain_ms(own, f, bsr_candidate(2)), 0.0) << "blocks not counted";
  EXPECT_DOUBLE_EQ(block_row_chain_ms(FormatBytesCalibration{}, f, bsr_candidate(4)), 0.0);
  ModelSet set;
  set.records.update<BytesRecord>([&](BytesRecord& r) { r.formats = {own}; });
  const Candidate c = bsr_candidate(4);
  EXPECT_DOUBLE_EQ(ModelPredictor(set).predict_ms(cusparse_bsr, f, c, h100_like()).ms, 0.014);
  f.format_features["cusparse_bsr"] = bsr_blocks(4, 1000);  // 1 a block row: near the floor
  EXPECT_NEAR(ModelPredictor(set).predict_ms(cusparse_bsr, f, c, h100_like()).ms, 0.0045, 1e-12);
  f.format_features["cusparse_bsr"] = bsr_blocks(4, 1000 * 20);
  EXPECT_LE(ModelPredictor(set, std::vector<std::string>{"bsr_block_row_chain"})
                .predict_ms(cusparse_bsr, f, c, h100_like())
                .ms,
            0.007 + 1e-12)
      << "without the chain the floor is the tiny sample's again";
}

TEST(ModelPredictor, NeedsNoSharedBytesFitForAFormatWithItsOwn) {
  ModelSet set;
  set.records.update<BytesRecord>([&](BytesRecord& r) {
    r.formats = {
        {.format = FormatId{10},
         .bytes = {.time_vs_bytes = {.intercept = 0.002, .slope = 1.0 / 1e9, .quality = {}}}}};
  });
  const ModelPredictor predictor(set);
  Candidate c;
  c.format = FormatId{10};
  EXPECT_GT(predictor.predict_ms(cusparse_sell, rows_of(1000, 5, 1.0), c, h100_like()).ms, 0.002);
}

// An ell record whose banded twin at its most rows (2^20 rows of 32, fp64: 400 MiB beyond
// L2) takes 0.304 ms x 0.5: 0.148 ms above a 0.004 ms launch floor.
void add_banded_ell(ModelSet& set) {
  LogGridFit grid;
  grid.widths = {8, 32};
  grid.rows = {1024, 1048576};
  grid.log_ms = {std::log(0.004), std::log(0.006), std::log(0.2), std::log(0.304)};
  LogGridFit banded;
  banded.widths = {8, 32};
  banded.rows = {1024, 1048576};
  banded.log_ms = {0.0, 0.0, std::log(0.5), std::log(0.5)};
  set.records.update<EllRecord>([&](EllRecord& r) {
    r.variants = {{.kernel = {.resources = {.threads_per_block = 256}, .threads_per_row = 1},
                   .time_vs_width_rows = grid,
                   .banded_ratio_vs_width_rows = banded}};
  });
}

TEST(ModelPredictor, HoldsABytesFormatBeyondL2AboveItsDramBytesAtTheBandedEllRate) {
  ModelSet set;
  set.launch_floor_ms = 0.004;
  add_banded_ell(set);
  // A fit whose banded ratio puts a band far above any DRAM rate.
  set.records.update<BytesRecord>([&](BytesRecord& r) {
    r.formats = {{.format = kCusparseSellFormatId,
                  .bytes = {.time_vs_bytes = {.intercept = 0.002, .slope = 1e-10, .quality = {}},
                            .banded_ratio = {{1e3, 0.5}}}}};
  });
  const Candidate c{.format = kCusparseSellFormatId,
                    .params = FieldSet::of(CusparseSellParams{
                        .slice_height = 32, .library_algorithm = kCusparseSpmvSellAlg1}),
                    .launch = {}};
  const ModelPredictor predictor(set);
  const ModelPredictor without(set, std::vector<std::string>{"dram_rate"});
  // The fastest sample: 2^20 x 32 x (4 + 8) + x and y of 2^20, 419430400 bytes in 0.148 ms.
  const double rate = 419430400.0 / 0.148;
  // A band of 2M rows of 8: 62501 slice offsets and 16M slots, x and y, beyond L2.
  const MatrixFeatures band = rows_of(2000000, 8, 0.0);
  const std::uint64_t streamed = cusparse_sell.streamed_bytes(band, Precision::fp64, c);
  const double bound = 0.004 + (62501.0 * 4 + 16e6 * 12 + 4e6 * 8) / rate;
  EXPECT_NEAR(predictor.predict_ms(cusparse_sell, band, c, h100_like(), streamed).ms, bound, 1e-12);
  EXPECT_LT(without.predict_ms(cusparse_sell, band, c, h100_like(), streamed).ms, 0.5 * bound);
  // In L2 the bytes are L2's: no bound.
  const MatrixFeatures small = rows_of(1000, 8, 0.0);
  const std::uint64_t small_bytes = cusparse_sell.streamed_bytes(small, Precision::fp64, c);
  EXPECT_DOUBLE_EQ(predictor.predict_ms(cusparse_sell, small, c, h100_like(), small_bytes).ms,
                   without.predict_ms(cusparse_sell, small, c, h100_like(), small_bytes).ms);
}

// An ELL grid whose samples inside L2 (262144 rows) run faster than DRAM streams and whose
// largest (2^20 rows) stream from it, as an H100's do; random-column times, banded ratios.
void add_ell_across_l2(ModelSet& set) {
  LogGridFit grid;
  grid.widths = {8, 32};
  grid.rows = {1024, 262144, 1048576};
  grid.log_ms = {std::log(0.004), std::log(0.006), std::log(0.02),
                 std::log(0.08),  std::log(0.2),   std::log(0.304)};
  LogGridFit banded;
  banded.widths = {8, 32};
  banded.rows = {1024, 262144, 1048576};
  banded.log_ms = {0.0, 0.0, std::log(0.2), std::log(0.2), std::log(0.5), std::log(0.5)};
  set.records.update<EllRecord>([&](EllRecord& r) {
    r.variants = {{.kernel = {.resources = {.threads_per_block = 256}, .threads_per_row = 1},
                   .time_vs_width_rows = grid,
                   .banded_ratio_vs_width_rows = banded}};
  });
  set.records.update<CooRecord>([&](CooRecord& r) {
    r.variants = {{.kernel = {.resources = {.threads_per_block = 256}, .threads_per_row = 1},
                   .time_vs_nnz = {.intercept = 0.01, .slope = 1e-6, .quality = {}}}};
  });
}

const CudaEllRules cuda_ell;
const CudaHybRules cuda_hyb;

Candidate ell_candidate(std::uint32_t width) {
  return Candidate{.format = kCudaEllFormatId,
                   .params = FieldSet::of(CudaEllParams{.ell_width = width}),
                   .launch = {.block_size = 256, .threads_per_row = 1, .grid_size = 1}};
}

// `rows` rows of `short_length` among which one in 64 is `long_length`, columns at random.
MatrixFeatures random_rows_with_a_few_long(std::int64_t rows, std::int64_t short_length,
                                           std::int64_t long_length) {
  MatrixFeatures f;
  f.rows = f.cols = rows;
  f.distribution = {{short_length, rows - rows / 64}, {long_length, rows / 64}};
  f.nnz = short_length * (rows - rows / 64) + long_length * (rows / 64);
  f.row_length_min = short_length;
  f.row_length_max = long_length;
  f.row_length_mean = static_cast<double>(f.nnz) / static_cast<double>(rows);
  f.mean_row_span_fraction = 1.0;
  f.x_sectors_per_nonzero = 1.0;
  return f;
}

// cuda_ell's rows stop at their first padding slot, so its warps walk more slots than they
// gather: the random samples' excess over the banded twins is paid per non-zero. Rows of 5
// walk 8 slots (two groups of four); with one row in 64 of 32, a warp's walk is 8 + 24 (1 -
// (63/64)^32) = 17.6, 18 slots, and 5.4 non-zeros a row gathered of them.
TEST(ModelPredictor, PaysAnEllsRandomGathersPerNonZeroAndItsWalkPerSlot) {
  ModelSet set;
  set.launch_floor_ms = 0.004;
  add_ell_across_l2(set);
  const ModelPredictor predictor(set, std::vector<std::string>{"dram_rate"});
  const MatrixFeatures f = random_rows_with_a_few_long(262144, 5, 32);
  const EllModel grid_only(set.records.find<EllRecord>()->variants);
  const double rho = grid_only.predict_shape_ms(18, 262144, 256, 0.0).ms /
                     grid_only.predict_shape_ms(18, 262144, 256, 1.0).ms;
  const double gathered = static_cast<double>(f.nnz) / (262144.0 * 18.0);
  const Candidate c = ell_candidate(32);
  EXPECT_NEAR(predictor.predict_ms(cuda_ell, f, c, h100_like()).ms,
              grid_only.predict_shape_ms(18, 262144, 256, 1.0).ms * (rho + (1.0 - rho) * gathered),
              1e-12);
  // What a multiply reads of the arrays is the walk's slots, not the padded width's.
  EXPECT_EQ(cuda_ell.streamed_bytes(f, Precision::fp64, c), 262144ull * 18 * 12);
  EXPECT_EQ(cuda_ell.device_bytes(f, Precision::fp64, c), 262144ull * 32 * 12);
}

// The grid interpolates in log(rows) between a sample in L2 and one beyond it: a band just past
// L2 is priced partly at L2's rate, below what DRAM streams. The dram_rate bound holds cuda_ell
// (and cuda_hyb, the same kernel) at its walked bytes and both vectors at the fastest banded
// sample's rate above the launch floor.
TEST(ModelPredictor, HoldsAnEllBeyondL2AboveItsWalkedBytesAtTheDramRate) {
  ModelSet set;
  set.launch_floor_ms = 0.004;
  add_ell_across_l2(set);
  const ModelPredictor predictor(set);
  const ModelPredictor without(set, std::vector<std::string>{"dram_rate"});
  // The fastest sample beyond L2: 2^20 x 32 x (4 + 8) + x and y, in 0.304 x 0.5 - 0.004 ms.
  const double rate = (1048576.0 * 32 * 12 + 2 * 1048576.0 * 8) / (0.304 * 0.5 - 0.004);
  // A band of 500000 rows of 8: 48 MB of slots and 8 MB of vectors, beyond the 50 MiB L2.
  const MatrixFeatures band = rows_of(500000, 8, 0.0);
  const Candidate c = ell_candidate(8);
  const double bound = 0.004 + (500000.0 * 8 * 12 + 2 * 500000.0 * 8) / rate;
  EXPECT_NEAR(predictor.predict_ms(cuda_ell, band, c, h100_like()).ms, bound, 1e-12);
  EXPECT_LT(without.predict_ms(cuda_ell, band, c, h100_like()).ms, 0.9 * bound);
  // HYB at K = 8 runs the same kernel over the same slots, its COO part empty: the same price.
  Candidate hyb = c;
  hyb.format = kCudaHybFormatId;
  hyb.params = FieldSet::of(CudaHybParams{.ell_width = 8});
  EXPECT_NEAR(predictor.predict_ms(cuda_hyb, band, hyb, h100_like()).ms, bound, 1e-12);
  // Inside L2 no bound: 100000 rows, 11 MB.
  const MatrixFeatures small = rows_of(100000, 8, 0.0);
  EXPECT_DOUBLE_EQ(predictor.predict_ms(cuda_ell, small, c, h100_like()).ms,
                   without.predict_ms(cuda_ell, small, c, h100_like()).ms);
}

// cuda_hyb's ELL part is cuda_ell's kernel: at K = the longest row (no COO part) the two are one
// multiply, priced alike, whatever the rows' lengths and locality (ranking the two apart on a
// price difference alone put HYB first on fem-b3-4M and road-1.5M).
TEST(ModelPredictor, PricesHybAtTheLongestRowAsTheEllOfThatWidth) {
  ModelSet set;
  set.launch_floor_ms = 0.004;
  add_ell_across_l2(set);
  const ModelPredictor predictor(set);
  for (const std::int64_t rows : {50000, 262144, 2000000}) {
    const MatrixFeatures f = random_rows_with_a_few_long(rows, 5, 32);
    Candidate hyb = ell_candidate(32);
    hyb.format = kCudaHybFormatId;
    hyb.params = FieldSet::of(CudaHybParams{.ell_width = 32});
    EXPECT_NEAR(predictor.predict_ms(cuda_hyb, f, hyb, h100_like()).ms,
                predictor.predict_ms(cuda_ell, f, ell_candidate(32), h100_like()).ms, 1e-12)
        << rows << " rows";
  }
}

}  // namespace
}  // namespace spmvd
