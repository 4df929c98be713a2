#include "models/calibration.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>

#include "core/error.hpp"
#include "kernels/formats/cpu_coo/cpu_coo_rules.hpp"
#include "kernels/formats/cpu_csr/cpu_csr_rules.hpp"
#include "kernels/formats/cpu_gpu_split/cpu_gpu_split_layout.hpp"
#include "kernels/formats/cpu_gpu_split/cpu_gpu_split_rules.hpp"
#include "kernels/formats/cuda_bro_coo/cuda_bro_coo_rules.hpp"
#include "kernels/formats/cuda_bro_ell/cuda_bro_ell_rules.hpp"
#include "kernels/formats/cuda_bro_hyb/cuda_bro_hyb_rules.hpp"
#include "kernels/formats/cuda_coo/cuda_coo_rules.hpp"
#include "kernels/formats/cuda_csr_scalar/cuda_csr_scalar_rules.hpp"
#include "kernels/formats/cuda_csr_vector/cuda_csr_vector_rules.hpp"
#include "kernels/formats/cuda_dia/cuda_dia_rules.hpp"
#include "kernels/formats/cuda_ehyb/cuda_ehyb_rules.hpp"
#include "kernels/formats/cuda_ell/cuda_ell_rules.hpp"
#include "kernels/formats/cusparse_bsr/cusparse_bsr_rules.hpp"
#include "kernels/formats/cusparse_csr/cusparse_csr_rules.hpp"
#include "models/calibration/cache_resident_stage.hpp"
#include "models/calibration/sample_plan.hpp"
#include "models/calibration/stage.hpp"
#include "models/device_calibration.hpp"
#include "models/families/bytes/bytes_calibration.hpp"
#include "models/families/bytes/bytes_record.hpp"
#include "models/families/coo/coo_record.hpp"
#include "models/families/cpu_gpu/cpu_gpu_fit.hpp"
#include "models/locality.hpp"
#include "models/model_accuracy.hpp"
#include "models/model_plots.hpp"
#include "models/model_predictor.hpp"
#include "models/sample_generators.hpp"
#include "models/tests/test_device.hpp"

namespace spmvd {
namespace {

using testing_support::h100_like;

// Whether the cache_resident grid plans a point of `rows` x `length` in fp64: its CSR, x and y
// within an H100's L2.
bool in_h100_l2(std::int64_t rows, std::int64_t length) {
  const std::int64_t csr = (rows + 1) * 4 + rows * length * 12;
  return csr + 2 * rows * 8 <= static_cast<std::int64_t>(h100_like().l2_bytes);
}

// The points of a rows x row length grid that the cache_resident stage plans in fp64 on an H100.
std::size_t in_h100_l2_points(const std::vector<std::int64_t>& rows,
                              const std::vector<std::int64_t>& lengths) {
  std::size_t points = 0;
  for (const std::int64_t r : rows)
    for (const std::int64_t length : lengths) points += in_h100_l2(r, length) ? 1 : 0;
  return points;
}

// ---- sample matrices ----

TEST(UniformRowLengthSample, EveryRowHoldsCSortedDistinctColumnsSpreadOverX) {
  const CsrMatrix<double> m = uniform_row_length_sample(1000, 7, 42);
  EXPECT_NO_THROW(validate(m));  // sorted, distinct, in range, finite
  ASSERT_EQ(m.rows, 1000);
  ASSERT_EQ(m.cols, 1000);
  ASSERT_EQ(m.nnz(), 7000);
  for (std::int64_t r = 0; r < m.rows; ++r) {
    ASSERT_EQ(m.row_length(r), 7) << "row " << r;
    // One column per seventh of x: the first below 1000/7, the last at or above 6*1000/7.
    EXPECT_LT(m.col_indices[m.row_offsets[r]], 1000 / 7 + 1);
    EXPECT_GE(m.col_indices[m.row_offsets[r + 1] - 1], 6 * 1000 / 7);
  }
  for (const double v : m.values) {
    EXPECT_GE(v, -1.0);
    EXPECT_LT(v, 1.0);
  }
}

TEST(UniformRowLengthSample, IsDeterministicInItsSeed) {
  const auto a = uniform_row_length_sample(300, 5, 1);
  const auto b = uniform_row_length_sample(300, 5, 1);
  const auto c = uniform_row_length_sample(300, 5, 2);
  EXPECT_EQ(a.col_indices, b.col_indices);
  EXPECT_EQ(a.values, b.values);
  EXPECT_NE(a.col_indices, c.col_indices);
}

TEST(UniformRowLengthSample, RefusesRowsLongerThanTheMatrixIsWide) {
  try {
    uniform_row_length_sample(4, 5, 1);
    FAIL() << "expected Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    EXPECT_STREQ(
        e.what(),
        "uniform_row_length_sample: row length 5 must be in [1, cols = 4] and rows = 4 in "
        "[1, 2^31 - 1]");
  }
}

// The host's cpu_coo samples: few rows gathering from an x as wide as a real matrix's.
TEST(WideUniformRowLengthSample, SpreadsEveryRowOverAllColumnsNotJustAsManyAsRows) {
  const CsrMatrix<double> m = wide_uniform_row_length_sample(100, 8000, 8, 5);
  EXPECT_NO_THROW(validate(m));
  ASSERT_EQ(m.rows, 100);
  ASSERT_EQ(m.cols, 8000);
  ASSERT_EQ(m.nnz(), 800);
  ColIndex widest = 0;
  for (std::int64_t r = 0; r < m.rows; ++r) {
    ASSERT_EQ(m.row_length(r), 8) << "row " << r;
    // One column per eighth of x: the first below 1000, the last at or above 7000.
    EXPECT_LT(m.col_indices[m.row_offsets[r]], 1000);
    EXPECT_GE(m.col_indices[m.row_offsets[r + 1] - 1], 7000);
    widest = std::max(widest, m.col_indices[m.row_offsets[r + 1] - 1]);
  }
  EXPECT_GE(widest, 100) << "columns beyond the row count";
  EXPECT_THROW(wide_uniform_row_length_sample(100, 7, 8, 5), Error) << "fewer columns than a row";
  // Taller than wide (the host's narrow-x samples): every row still one column a bin.
  const CsrMatrix<double> tall = wide_uniform_row_length_sample(1000, 64, 8, 5);
  EXPECT_NO_THROW(validate(tall));
  for (std::int64_t r = 0; r < tall.rows; ++r)
    for (std::int64_t j = 0; j < 8; ++j)
      EXPECT_EQ(tall.col_indices[static_cast<std::size_t>(tall.row_offsets[r] + j)] / 8, j);
}

TEST(SampleFeatures, DescribeOneRowLength) {
  const auto m = uniform_row_length_sample(64, 4, 3);
  const MatrixFeatures f = sample_features(m);
  EXPECT_EQ(f.rows, 64);
  EXPECT_EQ(f.nnz, 256);
  EXPECT_EQ(f.row_length_min, 4);
  EXPECT_EQ(f.row_length_max, 4);
  EXPECT_DOUBLE_EQ(f.row_length_mean, 4.0);
  EXPECT_EQ(f.distribution, (std::vector<RowLengthCount>{{4, 64}}));
  // First column in [0, 16), last in [48, 64): spans between 33/64 and 64/64 of x.
  EXPECT_GT(f.mean_row_span_fraction, 33.0 / 64.0);
  EXPECT_LE(f.mean_row_span_fraction, 1.0);
}

// ---- the plan (pure: hand-written registry and device) ----

// Rules with an id, a name and a model family only: planning never asks for more, and never
// builds.
class NamedRules final : public FormatRules {
 public:
  NamedRules(FormatId id, std::string name, bool gpu, std::string family)
      : id_(id), name_(std::move(name)), gpu_(gpu), family_(std::move(family)) {}
  FormatId id() const noexcept override { return id_; }
  std::string_view name() const noexcept override { return name_; }
  bool needs_gpu() const noexcept override { return gpu_; }
  std::string_view model_family() const noexcept override { return family_; }
  bool admissible(const MatrixFeatures&, const DeviceInfo&, Precision,
                  std::uint64_t) const override {
    return true;
  }
  // Two parameter sets, as cuSPARSE CSR offers its two algorithms (the format_bytes stage
  // plans one record per distinct parameters).
  std::vector<Candidate> candidates(const MatrixFeatures&, const DeviceInfo&) const override {
    return {
        Candidate{
            .format = id_,
            .params = FieldSet::of(CusparseCsrParams{.library_algorithm = kCusparseSpmvCsrAlg1}),
            .launch = {}},
        Candidate{
            .format = id_,
            .params = FieldSet::of(CusparseCsrParams{.library_algorithm = kCusparseSpmvCsrAlg2}),
            .launch = {}}};
  }
  std::uint64_t device_bytes(const MatrixFeatures&, Precision, const Candidate&) const override {
    return 0;
  }

 private:
  FormatId id_;
  std::string name_;
  bool gpu_;
  std::string family_;
};

std::unique_ptr<SpmvOperator> never_built(const BuildSource&, Precision,
                                          const Candidate&) {
  throw Error(ErrorCode::internal, "planning must not build formats");
}

FormatRegistry gpu_catalogue() {
  FormatRegistry r;
  const auto add = [&r](FormatId id, const char* name, bool gpu, const char* family) {
    r.add(std::make_unique<NamedRules>(id, name, gpu, family), never_built);
  };
  add(kCudaCsrVectorFormatId, "cuda_csr_vector", true, "csr_vector");
  add(kCusparseCsrFormatId, "cusparse_csr", true, "bytes");
  add(kCudaCsrScalarFormatId, "cuda_csr_scalar", true, "csr_vector");
  add(kCudaEllFormatId, "cuda_ell", true, "ell");
  add(kCudaCooFormatId, "cuda_coo", true, "coo");
  add(kCpuCsrFormatId, "cpu_csr", false, "bytes");
  add(kCpuCooFormatId, "cpu_coo", false, "coo");
  return r;
}

KernelResourcesFn fixed_registers(int registers) {
  return [registers](CompiledKernel, Precision, int, int block) -> std::optional<KernelResources> {
    return KernelResources{.threads_per_block = block,
                           .registers_per_thread = registers,
                           .static_shared_bytes = 0,
                           .dynamic_shared_bytes = 0};
  };
}

const PlannedVariant& find_variant(const CalibrationPlan& plan, CalibrationStage stage,
                                   int threads_per_row, int block) {
  for (const PlannedVariant& v : plan.variants)
    if (v.stage == stage && v.kernel.threads_per_row == threads_per_row &&
        v.kernel.resources.threads_per_block == block)
      return v;
  throw std::runtime_error("no such variant");
}

TEST(PlanCalibration, CsrVectorStripsAreOneWaveOfResidentWarpsAsInPaper004) {
  const FormatRegistry registry = gpu_catalogue();
  const CalibrationPlan plan =
      plan_calibration(registry, h100_like(), Precision::fp64, {}, fixed_registers(30));
  // 256 threads, 30 registers: P = 2048 / 256 = 8; M = 132; one row per warp (t = 32):
  // M * P * w_pTB = 132 * 8 * 8 = 8448 rows (paper 004 Sec. 4.3.1).
  const PlannedVariant& warp = find_variant(plan, CalibrationStage::csr_vector, 32, 256);
  EXPECT_EQ(warp.format, kCudaCsrVectorFormatId);
  EXPECT_EQ(warp.rows_per_strip, 8448);
  EXPECT_TRUE(warp.registers_measured);
  EXPECT_EQ(warp.kernel.resources.registers_per_thread, 30);
  // The scalar kernel is the t = 1 variant: 256 rows per block.
  const PlannedVariant& scalar = find_variant(plan, CalibrationStage::csr_vector, 1, 256);
  EXPECT_EQ(scalar.format, kCudaCsrScalarFormatId);
  EXPECT_EQ(scalar.rows_per_strip, 132 * 8 * 256);
  EXPECT_FALSE(scalar.registers_measured);  // its kernel is not in a header
  EXPECT_EQ(scalar.kernel.resources.registers_per_thread, kAssumedRegistersPerThread);
  // Every variant: at least 5 row lengths (3 conic + 2 line), the longest sample near
  // max_sample_nnz; a sample is S strips, or more rows where S strips of its rows would fit in
  // 1.5 L2s (it would run from L2, not DRAM): the fewest multiples of 65536 that do not, the same
  // for every variant (one generated matrix).
  std::map<std::int64_t, std::int64_t> grown_rows;  // by row length
  const auto footprint = [](const SampleShape& s) {  // fp64 CSR, x and y
    return static_cast<double>(s.nnz() * 12 + s.rows * (4 + 8 + 8) + 4);
  };
  const double streaming = 1.5 * static_cast<double>(h100_like().l2_bytes);
  std::size_t csr_variants = 0;
  for (const PlannedVariant& v : plan.variants) {
    if (v.stage != CalibrationStage::csr_vector) continue;
    ++csr_variants;
    std::vector<SampleShape> random;
    std::set<std::int64_t> banded_lengths;
    for (const SampleShape& s : v.samples) {
      if (s.banded) banded_lengths.insert(s.row_length);
      else random.push_back(s);
    }
    ASSERT_GE(random.size(), 5u);
    const std::int64_t base_rows = v.sample_strips * v.rows_per_strip;
    for (const SampleShape& s : v.samples) {
      if (s.rows == base_rows) {
        EXPECT_GE(footprint(s), streaming) << "c " << s.row_length << " stays in L2";
        continue;
      }
      EXPECT_GT(s.rows, base_rows);
      EXPECT_EQ(s.rows % 65536, 0) << "rows " << s.rows << ", c " << s.row_length;
      EXPECT_GE(footprint(s), streaming) << "c " << s.row_length;
      SampleShape fewer = s;
      fewer.rows -= 65536;
      EXPECT_LT(footprint(fewer), streaming) << "c " << s.row_length;
      const auto [it, first] = grown_rows.emplace(s.row_length, s.rows);
      EXPECT_EQ(it->second, s.rows) << "c " << s.row_length << " grown differently";
    }
    EXPECT_LE(random.back().nnz(),
              std::max(plan.max_sample_nnz, v.rows_per_strip * random.back().row_length));
    EXPECT_GT(2 * random.back().nnz(), plan.max_sample_nnz);
    // The x-locality twins (models/locality.hpp): banded copies of c = 2, 8, 32.
    EXPECT_EQ(banded_lengths, (std::set<std::int64_t>{2, 8, 32}));
  }
  EXPECT_EQ(csr_variants, 6u * 3u);  // t = 1, 2, 4, 8, 16, 32 at block 128, 256, 512
}

TEST(PlanCalibration, TimesALatencySampleAndALongRowPerLaneCount) {
  const FormatRegistry registry = gpu_catalogue();
  const CalibrationPlan plan =
      plan_calibration(registry, h100_like(), Precision::fp64, {}, fixed_registers(30));
  std::set<int> lanes;
  for (const PlannedVariant& v : plan.variants) {
    if (v.stage != CalibrationStage::latency) continue;
    lanes.insert(v.kernel.threads_per_row);
    EXPECT_EQ(v.kernel.resources.threads_per_block, 256);
    ASSERT_EQ(v.samples.size(), 5u);
    EXPECT_EQ(v.samples[0], (SampleShape{.rows = kLatencySampleRows, .row_length = 4}));
    // The long row in L2, then in the largest bytes sample (beyond L2), each after its twin.
    EXPECT_EQ(v.samples[1], (SampleShape{.rows = kLongRowLength, .row_length = 1}));
    EXPECT_EQ(v.samples[2], (SampleShape{.rows = kLongRowLength,
                                         .row_length = 1,
                                         .long_row = kLongRowLength}));
    EXPECT_EQ(v.samples[3], (SampleShape{.rows = plan.max_sample_nnz / 8, .row_length = 8}));
    SampleShape with_long_row = v.samples[3];
    with_long_row.long_row = kLongRowLength;
    EXPECT_EQ(v.samples[4], with_long_row);
  }
  EXPECT_EQ(lanes, (std::set<int>{1, 2, 4, 8, 16, 32}));
}

TEST(BandedRowLengthSample, HoldsContiguousColumnsAroundTheDiagonal) {
  const CsrMatrix<double> m = banded_row_length_sample(100, 5, 3);
  ASSERT_EQ(m.nnz(), 500);
  // Row 50: columns 48..52; row 0 starts at 0; row 99 ends at 99.
  for (std::int64_t j = 0; j < 5; ++j) {
    EXPECT_EQ(m.col_indices[static_cast<std::size_t>(m.row_offsets[50] + j)], 48 + j);
    EXPECT_EQ(m.col_indices[static_cast<std::size_t>(m.row_offsets[0] + j)], j);
    EXPECT_EQ(m.col_indices[static_cast<std::size_t>(m.row_offsets[99] + j)], 95 + j);
  }
  EXPECT_NEAR(sample_features(m).mean_row_span_fraction, 0.05, 1e-12);
  EXPECT_THROW(banded_row_length_sample(4, 5, 3), Error);
}

TEST(BandedMixedLengthSample, HoldsContiguousColumnsOfMixedLengthsAroundTheDiagonal) {
  const std::int64_t rows = 4000, mean = 8;
  const CsrMatrix<double> m = banded_mixed_length_sample(rows, mean, 3);
  ASSERT_NO_THROW(validate(m));
  std::set<std::int64_t> lengths;
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::int64_t length = m.row_length(r);
    ASSERT_GE(length, mean - mean / 2) << "row " << r;
    ASSERT_LE(length, mean + mean / 2) << "row " << r;
    lengths.insert(length);
    // Contiguous, starting at clamp(r - length / 2, 0, rows - length).
    const std::int64_t first = std::clamp<std::int64_t>(r - length / 2, 0, rows - length);
    for (std::int64_t j = 0; j < length; ++j)
      ASSERT_EQ(m.col_indices[static_cast<std::size_t>(m.row_offsets[r] + j)], first + j)
          << "row " << r << " entry " << j;
  }
  EXPECT_EQ(lengths.size(), 9U) << "every length of [4, 12]";
  EXPECT_NEAR(static_cast<double>(m.nnz()) / static_cast<double>(rows), 8.0, 0.2);
  EXPECT_EQ(banded_mixed_length_sample(rows, mean, 3).col_indices, m.col_indices);
  EXPECT_NE(banded_mixed_length_sample(rows, mean, 4).row_offsets, m.row_offsets);
  EXPECT_THROW(banded_mixed_length_sample(4, 5, 3), Error);

  // Its features count every length, as the tuner's would.
  const MatrixFeatures f = sample_features(m);
  std::int64_t counted = 0;
  double square_sum = 0.0;
  for (const RowLengthCount& set : f.distribution) {
    counted += set.rows;
    square_sum += static_cast<double>(set.rows * set.length * set.length);
  }
  EXPECT_EQ(counted, rows);
  EXPECT_EQ(f.distribution.size(), 9U);
  EXPECT_EQ(f.row_length_min, 4);
  EXPECT_EQ(f.row_length_max, 12);
  EXPECT_EQ(f.empty_rows, 0);
  const double mean_length = static_cast<double>(m.nnz()) / static_cast<double>(rows);
  EXPECT_DOUBLE_EQ(f.row_length_mean, mean_length);
  EXPECT_NEAR(f.row_length_stddev,
              std::sqrt(square_sum / static_cast<double>(rows) - mean_length * mean_length), 1e-9);
  EXPECT_NEAR(f.row_length_stddev, std::sqrt(80.0 / 12.0), 0.1)
      << "uniform on 9 lengths: (9^2 - 1) / 12";
}

TEST(SampleFeatures, DescribeALongRowAmongRowsOfOneLength) {
  const auto m = with_long_row(uniform_row_length_sample(64, 4, 3), 40);
  const MatrixFeatures f = sample_features(m);
  EXPECT_EQ(f.row_length_min, 4);
  EXPECT_EQ(f.row_length_max, 40);
  EXPECT_EQ(f.distribution, (std::vector<RowLengthCount>{{4, 63}, {40, 1}}));
  // One row 36 above the other 63: the population deviation 36 sqrt(63) / 64.
  EXPECT_NEAR(f.row_length_stddev, 36.0 * std::sqrt(63.0) / 64.0, 1e-9);
}

TEST(PlanCalibration, FitsEachFormatWithoutADedicatedModelOnRandomAndBandedSamples) {
  const FormatRegistry registry = gpu_catalogue();
  const CalibrationPlan plan =
      plan_calibration(registry, h100_like(), Precision::fp64, {}, fixed_registers(30));
  std::vector<FormatParams> variants;
  for (const PlannedVariant& v : plan.variants) {
    if (v.stage != CalibrationStage::format_bytes) continue;
    variants.push_back(v.params);
    EXPECT_EQ(v.format, kCusparseCsrFormatId);  // the one such format of this catalogue
    ASSERT_EQ(v.samples.size(), 8u);
    // max_sample_nnz and a quarter of it, in whole rows of coo_row_length = 8.
    EXPECT_NEAR(static_cast<double>(v.samples[1].nnz()), plan.max_sample_nnz, 8.0);
    EXPECT_NEAR(static_cast<double>(v.samples[0].nnz() * 4), plan.max_sample_nnz, 32.0);
    EXPECT_FALSE(v.samples[1].banded);
    EXPECT_TRUE(v.samples[2].banded);
    EXPECT_TRUE(v.samples[3].banded);
    // Last, the format's critical path in L2 (a pair) and beyond it (the largest sample again,
    // with a long row), then the format's own floor.
    EXPECT_EQ(v.samples[4], (SampleShape{.rows = kInL2LongRowLength, .row_length = 1}));
    EXPECT_EQ(v.samples[5], (SampleShape{.rows = kInL2LongRowLength,
                                         .row_length = 1,
                                         .long_row = kInL2LongRowLength}));
    SampleShape largest_with_long_row = v.samples[1];
    largest_with_long_row.long_row = kLongRowLength;
    EXPECT_EQ(v.samples[6], largest_with_long_row);
    EXPECT_EQ(v.samples[7], (SampleShape{.rows = kLatencySampleRows, .row_length = 4}));
  }
  // One record per cuSPARSE CSR algorithm: ALG1 and ALG2 differ by 20-30 % on the H200.
  ASSERT_EQ(variants.size(), kFormatBytesVariants);
  EXPECT_EQ(variants[0].as<CusparseCsrParams>("cusparse_csr").library_algorithm,
            kCusparseSpmvCsrAlg1);
  EXPECT_NE(variants[1].as<CusparseCsrParams>("cusparse_csr").library_algorithm,
            kCusparseSpmvCsrAlg1);
  // COO: one banded twin, of the largest sample.
  for (const PlannedVariant& v : plan.variants) {
    if (v.stage != CalibrationStage::coo) continue;
    ASSERT_TRUE(v.samples.back().banded);
    EXPECT_EQ(v.samples.back().nnz(), v.samples[v.samples.size() - 2].nnz());
  }
}

TEST(PlanCalibration, FitsAFormatOfferedOnStructureAloneOnBandsOrRenumberedBands) {
  // DIA offers nothing without its diagonal count, and nothing on random columns (as many
  // diagonals as rows), renumbered or not: it is fitted on the banded sizes, the critical-path
  // pair on a band, the largest band and a tiny band, timed with its own features, and refuses
  // any long row (its pair is one shape twice). EHYB offers nothing where METIS cannot cut
  // (random columns) but does on a band under any numbering: its random end is the renumbered
  // band, with banded twins, and it walks a long row; it gets a record per kernel variant
  // although its partition count follows each sample's rows.
  FormatRegistry registry = gpu_catalogue();
  registry.add(std::make_unique<CudaDiaRules>(), never_built);
  registry.add(std::make_unique<CudaEhybRules>(), never_built);
  const CalibrationPlan plan =
      plan_calibration(registry, h100_like(), Precision::fp64, {}, fixed_registers(30));
  std::size_t dia = 0, dia_in_l2 = 0, ehyb_in_l2 = 0;
  std::set<std::uint32_t> ehyb_variants;
  for (const PlannedVariant& v : plan.variants) {
    if (v.format != kCudaDiaFormatId && v.format != kCudaEhybFormatId) continue;
    const bool is_dia = v.format == kCudaDiaFormatId;
    EXPECT_TRUE(v.own_features);
    EXPECT_EQ(v.bands_only, is_dia);
    EXPECT_EQ(v.renumbered_bands, !is_dia);
    for (const SampleShape& s : v.samples) {
      EXPECT_NE(s.banded, s.renumbered_band);
      // EHYB's bands mix their row lengths, as a real matrix's rows do, so that its sort by
      // length visits them out of the caller's order; DIA's do not.
      EXPECT_EQ(s.mixed_lengths, !is_dia);
      if (is_dia) {
        EXPECT_TRUE(s.banded);
      }
    }
    if (v.stage == CalibrationStage::cache_resident) {
      // Its in-L2 grid, timed with its own features: DIA's banded alone (no random twin);
      // EHYB's renumbered and banded, where it is offered (not on bands of two a row).
      if (is_dia) {
        ++dia_in_l2;
        EXPECT_EQ(v.samples.size(),
                  in_h100_l2_points(CalibrationOptions{}.cache_resident_rows,
                                    CalibrationOptions{}.cache_resident_row_lengths));
      } else {
        ++ehyb_in_l2;
        EXPECT_FALSE(v.samples.empty());
        for (const SampleShape& s : v.samples) EXPECT_NE(s.row_length, 2);
      }
      continue;
    }
    ASSERT_EQ(v.stage, CalibrationStage::format_bytes);
    // Two sizes (EHYB: renumbered, then their banded twins), the in-L2 pair, the largest size
    // with the long row, the tiny sample, all of the sizes' kind.
    const std::size_t sizes = is_dia ? 2 : 4;
    ASSERT_EQ(v.samples.size(), sizes + 4);
    EXPECT_NEAR(static_cast<double>(v.samples[1].nnz()), plan.max_sample_nnz, 8.0);
    if (!is_dia)
      for (std::size_t i = 0; i < 2; ++i) {
        SampleShape twin = v.samples[i];
        twin.banded = true;
        twin.renumbered_band = false;
        EXPECT_EQ(v.samples[i + 2], twin);
      }
    SampleShape in_l2 = v.samples[0];
    in_l2.rows = kInL2LongRowLength;
    EXPECT_EQ(v.samples[sizes], in_l2);
    SampleShape tiny = v.samples[0];
    tiny.rows = kLatencySampleRows;
    if (is_dia) tiny.row_length = 1;  // the diagonal: DIA's launch with the least work
    EXPECT_EQ(v.samples[sizes + 3], tiny);
    EXPECT_EQ(v.samples[sizes + 2].rows, v.samples[1].rows);
    EXPECT_EQ(v.samples[sizes + 2].long_row, v.samples[sizes + 1].long_row);
    if (is_dia) {
      ++dia;
      for (const SampleShape& s : v.samples) EXPECT_EQ(s.long_row, 0);
    } else {
      ehyb_variants.insert(v.params.as<CudaEhybParams>("cuda_ehyb").variant);
      EXPECT_EQ(v.samples[sizes + 1].long_row, kInL2LongRowLength);
    }
  }
  EXPECT_EQ(dia, 1u);  // DIA has no parameters: one record
  EXPECT_EQ(dia_in_l2, 1u);
  EXPECT_EQ(ehyb_variants, (std::set<std::uint32_t>{0, 1}));
  EXPECT_EQ(ehyb_in_l2, 2u);
}

// Whether BRO-ELL offers its layout of `lanes` a row on rows of row_length with a row 0 of
// long_row entries (its critical-path bound).
bool bro_ell_offers(std::int64_t rows, std::int64_t row_length, std::int64_t long_row,
                    std::uint32_t lanes) {
  MatrixFeatures f =
      sample_features(with_long_row(uniform_row_length_sample(rows, row_length, 7), long_row));
  return bro_ell_critical_path_bounded(f, lanes);
}

TEST(PlanCalibration, FitsAFormatOfferedOnlyWithItsOwnFeaturesOnRandomSizesAndTheirTwins) {
  // BRO-ELL offers nothing without its stream sizes, and on random columns once they are
  // counted: its records are timed with their own features on the random sizes, their banded
  // twins, its critical path and a tiny sample of the sizes' row length, and reach both of its
  // kernel variants and both of its lane counts (the 4-lane Hopper layout is a record of its
  // own).
  FormatRegistry registry = gpu_catalogue();
  registry.add(std::make_unique<CudaBroEllRules>(), never_built);
  const CalibrationPlan plan =
      plan_calibration(registry, h100_like(), Precision::fp64, {}, fixed_registers(30));
  std::set<std::uint32_t> kernel_variants;
  std::set<int> lanes;
  std::size_t records = 0, in_l2 = 0;
  for (const PlannedVariant& v : plan.variants) {
    if (v.format != kCudaBroEllFormatId) continue;
    EXPECT_TRUE(v.own_features);
    EXPECT_FALSE(v.bands_only);
    if (v.stage == CalibrationStage::cache_resident) {
      ++in_l2;  // its in-L2 grid, random and banded, timed with its own features too
      continue;
    }
    ASSERT_EQ(v.stage, CalibrationStage::format_bytes);
    ++records;
    kernel_variants.insert(v.params.as<CudaBroEllParams>("cuda_bro_ell").variant);
    lanes.insert(v.kernel.threads_per_row);
    // Two sizes, their twins, the in-L2 pair, the largest size with the long row, the tiny.
    ASSERT_EQ(v.samples.size(), 8u);
    for (std::size_t i = 0; i < 2; ++i) {
      EXPECT_FALSE(v.samples[i].banded);
      EXPECT_EQ(v.samples[i].long_row, 0);
      SampleShape twin = v.samples[i];
      twin.banded = true;
      EXPECT_EQ(v.samples[i + 2], twin);
    }
    EXPECT_NEAR(static_cast<double>(v.samples[1].nnz()), plan.max_sample_nnz, 8.0);
    const std::int64_t length = v.samples.front().row_length;
    EXPECT_EQ(v.samples[4], (SampleShape{.rows = kInL2LongRowLength, .row_length = length}));
    // The long row is half the longest BRO-ELL still offers this layout with, halving from
    // kInL2LongRowLength: near its bound's edge (a slice of t lanes walks it in
    // ceil(long / t) steps, at most 20 times the mean), within it on the largest size too.
    const std::int64_t long_row = v.samples[5].long_row;
    const auto t = static_cast<std::uint32_t>(v.kernel.threads_per_row);
    EXPECT_EQ(
        v.samples[5],
        (SampleShape{.rows = kInL2LongRowLength, .row_length = length, .long_row = long_row}));
    EXPECT_GE(long_row, 4 * length);
    EXPECT_TRUE(bro_ell_offers(kInL2LongRowLength, length, 2 * long_row, t));
    EXPECT_FALSE(bro_ell_offers(kInL2LongRowLength, length, 4 * long_row, t));
    EXPECT_TRUE(bro_ell_offers(v.samples[1].rows, length, long_row, t));
    SampleShape largest = v.samples[1];
    largest.long_row = long_row;
    EXPECT_EQ(v.samples[6], largest);
    EXPECT_EQ(v.samples.back(), (SampleShape{.rows = kLatencySampleRows, .row_length = length}));
  }
  EXPECT_EQ(records, kOwnFeatureBytesVariants + 1);  // the spread two, then the 4-lane layout
  EXPECT_EQ(in_l2, records);
  EXPECT_EQ(kernel_variants, (std::set<std::uint32_t>{kBroVariantPaper, kBroVariantHopper}));
  EXPECT_EQ(lanes, (std::set<int>{1, 4}));
}

TEST(FormatBytesFit, GivesARecordTimedWithItsOwnFeaturesTheStepsOfItsLongRow) {
  // Synthetic times for BRO-ELL's first record: a line through the sizes, the in-L2 pair 2 us
  // apart per 10 entries of the long row beyond the others', the largest size 30 us slower
  // with it: the record keeps each step per entry and the tiny sample as its floor.
  FormatRegistry registry = gpu_catalogue();
  registry.add(std::make_unique<CudaBroEllRules>(), never_built);
  const DeviceInfo device = h100_like();
  const CalibrationPlan plan =
      plan_calibration(registry, device, Precision::fp64, {}, fixed_registers(30));
  const auto record = std::find_if(plan.variants.begin(), plan.variants.end(), [](const auto& v) {
    return v.format == kCudaBroEllFormatId && v.stage == CalibrationStage::format_bytes;
  });
  ASSERT_NE(record, plan.variants.end());
  const PlannedVariant& v = *record;
  ASSERT_EQ(v.samples.size(), 8u);
  const double extra = static_cast<double>(v.samples[5].long_row - v.samples[5].row_length);
  std::vector<SamplePoint> ms(v.samples.size());
  for (std::size_t i = 0; i < 4; ++i) {
    const double bytes = 12.0 * static_cast<double>(v.samples[i].nnz());
    ms[i] = {bytes, 0.004 + bytes * 1e-9};
  }
  ms[4] = {1.0, 0.005};
  ms[5] = {2.0, 0.005 + extra * 2e-7};
  ms[6] = {ms[1].x, ms[1].y + 0.030};
  ms[7] = {3.0, 0.0042};
  const std::vector<double> predicted(v.samples.size(), 0.0);
  const CalibrationStageSpec& spec = calibration_stage(CalibrationStage::format_bytes);
  const SplitMeasurements split = split_banded(v, ms, spec.fitted_samples(v));
  ModelSet set;
  CalibrationState state{.set = set, .registry = registry, .device = device};
  const Candidate first{.format = v.format, .params = v.params, .launch = {}};
  spec.fit(
      {.variant = v, .ms = ms, .predicted = predicted, .split = split, .first_candidate = first},
      state);
  const BytesRecord* bytes = set.records.find<BytesRecord>();
  ASSERT_NE(bytes, nullptr);
  ASSERT_EQ(bytes->formats.size(), 1u);
  const FormatBytesCalibration& fit = bytes->formats.front();
  EXPECT_EQ(fit.threads_per_row, static_cast<std::uint32_t>(v.kernel.threads_per_row));
  EXPECT_NEAR(fit.long_row_step_ms, 2e-7, 1e-12);
  EXPECT_NEAR(fit.long_row_step_beyond_l2_ms, 0.030 / extra, 1e-12);
  EXPECT_DOUBLE_EQ(fit.floor_ms, 0.0042);
  EXPECT_NEAR(fit.bytes.time_vs_bytes.slope, 1e-9, 1e-15);
}

TEST(PlanCalibration, EveryOwnFeatureRecordOffersItsCandidateOnEachOfItsSamples) {
  // What the GPU run would build for every sample of a record timed with its own features
  // (format_bytes and its cache_resident grid), on small sizes, long rows included: each must
  // find its candidate. BRO-HYB, registered too, is composed (its parts' records price it): none.
  FormatRegistry registry = gpu_catalogue();
  registry.add(std::make_unique<CudaDiaRules>(), never_built);
  registry.add(std::make_unique<CudaBroEllRules>(), never_built);
  registry.add(std::make_unique<CudaBroCooRules>(), never_built);
  registry.add(std::make_unique<CudaBroHybRules>(), never_built);
  registry.add(std::make_unique<CudaEhybRules>(), never_built);
  CalibrationOptions options;
  options.max_sample_nnz = 1 << 16;
  options.cache_resident_rows = {512, 2048};
  options.cache_resident_row_lengths = {2, 8};
  const DeviceInfo device = h100_like();
  const CalibrationPlan plan =
      plan_calibration(registry, device, Precision::fp64, options, fixed_registers(30));
  std::set<FormatId> timed;
  for (const PlannedVariant& v : plan.variants) {
    if (!v.own_features) continue;
    const FormatRules& rules = *registry.find(v.format)->rules;
    for (const SampleShape& shape : v.samples) {
      const CsrMatrix<double> sample = make_sample(shape, shape_seed(options.seed, shape));
      MatrixFeatures features = sample_features(sample);
      add_own_features(rules, sample, features);
      EXPECT_NO_THROW(calibration_stage(v.stage).candidate(v, shape, features, registry, device))
          << rules.name() << " " << to_string(v.stage) << " " << shape.rows << " x "
          << shape.row_length << (shape.banded ? " banded" : "") << " long row " << shape.long_row;
    }
    timed.insert(v.format);
  }
  EXPECT_TRUE(timed.contains(kCudaDiaFormatId));
  EXPECT_TRUE(timed.contains(kCudaBroEllFormatId));
  EXPECT_TRUE(timed.contains(kCudaBroCooFormatId));
  EXPECT_TRUE(timed.contains(kCudaEhybFormatId));
  EXPECT_FALSE(timed.contains(kCudaBroHybFormatId));
}

TEST(PlanCalibration, TimesBsrAtMoreBlocksPerBlockRowAtItsLargestSize) {
  FormatRegistry registry = gpu_catalogue();
  registry.add(std::make_unique<CusparseBsrRules>(), never_built);
  const CalibrationPlan plan =
      plan_calibration(registry, h100_like(), Precision::fp32, {}, fixed_registers(30));
  std::set<std::uint32_t> block_dims;
  for (const PlannedVariant& v : plan.variants) {
    if (v.stage != CalibrationStage::format_bytes || v.format != kCusparseBsrFormatId) continue;
    const std::uint32_t block_dim = v.params.as<CusparseBsrParams>("cusparse_bsr").block_dim;
    block_dims.insert(block_dim);
    // 2 sizes, 2 banded twins, FormatBytesTail, then one sample per kBsrBlockRowLengths and
    // one per kBsrChainRowLengths.
    const std::size_t extra = std::size(kBsrBlockRowLengths);
    ASSERT_EQ(v.samples.size(), 8u + extra + std::size(kBsrChainRowLengths));
    for (std::size_t i = 0; i < std::size(kBsrChainRowLengths); ++i) {
      const SampleShape& s = v.samples[8 + extra + i];
      EXPECT_EQ(s.rows, kBsrChainRows);
      EXPECT_EQ(s.row_length, kBsrChainRowLengths[i]);
      EXPECT_EQ(s.block_dim, static_cast<std::int64_t>(block_dim));
    }
    const SampleShape& largest = v.samples[1];
    for (std::size_t i = 0; i < extra; ++i) {
      const SampleShape& s = v.samples[8 + i];
      EXPECT_EQ(s.row_length, kBsrBlockRowLengths[i]);
      // Dense blocks of the record's own size: no fill.
      EXPECT_EQ(s.block_dim, static_cast<std::int64_t>(block_dim));
      EXPECT_EQ(s.rows % s.block_dim, 0);
      EXPECT_FALSE(s.banded);
      // The largest size's non-zeros, within one block row of them.
      EXPECT_NEAR(static_cast<double>(s.nnz()), static_cast<double>(largest.nnz()),
                  static_cast<double>(s.block_dim * s.row_length));
      EXPECT_GT(s.row_length, largest.row_length);
    }
  }
  EXPECT_EQ(block_dims, (std::set<std::uint32_t>{2, 4}));
}

TEST(TimeOverBytesFit, IsOneOnTheLineAndScalesWithTheMeasuredTime) {
  LinearFit fit;  // 2 us + 1 ms per GB
  fit.intercept = 0.002;
  fit.slope = 1e-9;
  EXPECT_DOUBLE_EQ(time_over_bytes_fit({1e8, 0.102}, fit), 1.0);
  // A sample of fewer bytes taking the same time streams worse: the ratio says so, where
  // the plain time ratio of two samples would not.
  EXPECT_DOUBLE_EQ(time_over_bytes_fit({5e7, 0.104}, fit), 2.0);
  EXPECT_DOUBLE_EQ(time_over_bytes_fit({1e8, 0.051}, fit), 0.5);
  EXPECT_EQ(time_over_bytes_fit({1e8, 0.1}, LinearFit{}), 0.0);
}

TEST(SplitBanded, KeepsEachBandedTwinBesideItsRatioInAscendingOrder) {
  PlannedVariant v;
  v.samples = {{.rows = 4096, .row_length = 8},
               {.rows = 1024, .row_length = 8},
               {.rows = 4096, .row_length = 8, .banded = true},
               {.rows = 1024, .row_length = 8, .banded = true}};
  // (bytes, ms): the banded twins move fewer bytes than their random twins (BRO's packing).
  const std::vector<SamplePoint> ms{{4e8, 0.4}, {1e8, 0.1}, {3e8, 0.2}, {6e7, 0.04}};
  const SplitMeasurements split = split_banded(v, ms, v.samples.size());
  ASSERT_EQ(split.banded_ratio.size(), 2u);
  ASSERT_EQ(split.banded_twins.size(), 2u);
  EXPECT_EQ(split.banded_ratio[0].x, 1e8);
  EXPECT_DOUBLE_EQ(split.banded_ratio[0].y, 0.4);
  EXPECT_EQ(split.banded_ratio[1].x, 4e8);
  EXPECT_DOUBLE_EQ(split.banded_ratio[1].y, 0.5);
  EXPECT_EQ(split.banded_twins[0], (SamplePoint{6e7, 0.04}));
  EXPECT_EQ(split.banded_twins[1], (SamplePoint{3e8, 0.2}));
}

TEST(BandedRatioAtEqualBytes, DoesNotCountABandsFewerBytesTwice) {
  LinearFit fit;  // 2 us + 1 ms per GB, through the random twins below
  fit.intercept = 0.002;
  fit.slope = 1e-9;
  SplitMeasurements split;
  split.random = {{1e8, 0.102}, {4e8, 0.402}};
  // The small twin moves the same bytes as its random twin; the large one half of them.
  split.banded_ratio = {{1e8, 0.051 / 0.102}, {4e8, 0.101 / 0.402}};
  split.banded_twins = {{1e8, 0.051}, {2e8, 0.101}};
  const std::vector<SamplePoint> rho = banded_ratio_at_equal_bytes(split, fit);
  ASSERT_EQ(rho.size(), 2u);
  // Equal bytes: the plain time ratio.
  EXPECT_EQ(rho[0].x, 1e8);
  EXPECT_DOUBLE_EQ(rho[0].y, 0.5);
  // Half the bytes in a quarter of the time: locality saved half of what those bytes take on
  // the line (0.202 ms), not the three quarters the plain ratio (0.25) would charge on top of
  // the prediction's own halved bytes.
  EXPECT_EQ(rho[1].x, 4e8);
  EXPECT_DOUBLE_EQ(rho[1].y, 0.5);
  EXPECT_LT(split.banded_ratio[1].y, 0.3);
}

TEST(BandedRatioNetOfFixedCost, ComparesThePerRowPartsOnly) {
  // 5 us fixed; a band streaming its rows in 20 us where random columns take 50 us.
  EXPECT_DOUBLE_EQ(banded_ratio_net_of_fixed_cost(0.025, 0.055, 0.005), 0.4);
  // The whole-sample ratio would have said 0.45: the fixed cost, charged once by the model,
  // is not what locality saves.
  EXPECT_GT(0.025 / 0.055, 0.45);
  // No fixed cost, or nothing beyond it: the plain ratio.
  EXPECT_DOUBLE_EQ(banded_ratio_net_of_fixed_cost(0.02, 0.05, 0.0), 0.4);
  EXPECT_DOUBLE_EQ(banded_ratio_net_of_fixed_cost(0.004, 0.005, 0.006), 0.8);
  // A band faster than the fixed cost itself saves all of the per-row part.
  EXPECT_DOUBLE_EQ(banded_ratio_net_of_fixed_cost(0.004, 0.05, 0.005), 0.0);
  EXPECT_EQ(banded_ratio_net_of_fixed_cost(0.01, 0.0, 0.005), 0.0);
}

TEST(WithLongRow, ReplacesRowZeroByEvenlySpreadColumnsAndKeepsTheRest) {
  const CsrMatrix<double> base = uniform_row_length_sample(100, 3, 7);
  const CsrMatrix<double> full = with_long_row(base, 100);
  ASSERT_EQ(full.rows, 100);
  EXPECT_EQ(full.nnz(), 100 + 99 * 3);
  EXPECT_EQ(full.row_length(0), 100);
  for (std::int64_t k = 0; k < 100; ++k)
    EXPECT_EQ(full.col_indices[static_cast<std::size_t>(k)], k);
  for (std::int64_t r = 1; r < 100; ++r) {
    ASSERT_EQ(full.row_length(r), 3);
    for (std::int64_t j = 0; j < 3; ++j)
      EXPECT_EQ(full.col_indices[static_cast<std::size_t>(full.row_offsets[r] + j)],
                base.col_indices[static_cast<std::size_t>(base.row_offsets[r] + j)]);
  }
  // 25 of 100 columns: every fourth.
  const CsrMatrix<double> spread = with_long_row(base, 25);
  EXPECT_EQ(spread.row_length(0), 25);
  EXPECT_EQ(spread.col_indices[1], 4);
  EXPECT_EQ(spread.col_indices[24], 96);
  EXPECT_EQ((SampleShape{.rows = 100, .row_length = 3, .long_row = 25}).nnz(), spread.nnz());
  EXPECT_THROW(with_long_row(base, 101), Error);
  EXPECT_THROW(with_long_row(base, 0), Error);
}

TEST(SampleFeatures, CountTheLongRowApart) {
  const CsrMatrix<double> m = with_long_row(uniform_row_length_sample(100, 3, 7), 100);
  const MatrixFeatures f = sample_features(m);
  EXPECT_EQ(f.row_length_min, 3);
  EXPECT_EQ(f.row_length_max, 100);
  EXPECT_DOUBLE_EQ(f.row_length_mean, 397.0 / 100.0);
  ASSERT_EQ(f.distribution.size(), 2u);
  EXPECT_EQ(f.distribution[0], (RowLengthCount{.length = 3, .rows = 99}));
  EXPECT_EQ(f.distribution[1], (RowLengthCount{.length = 100, .rows = 1}));
  // Standard deviation of 99 threes and one hundred.
  const double mean = 3.97;
  EXPECT_NEAR(f.row_length_stddev,
              std::sqrt((99.0 * (3.0 - mean) * (3.0 - mean) + (100.0 - mean) * (100.0 - mean)) / 100.0),
              1e-12);
}

TEST(PlanCalibration, RegisterHeavyKernelsGetShorterStrips) {
  const FormatRegistry registry = gpu_catalogue();
  // 64 registers x 256 threads = 16384 per block: P = 4.
  const CalibrationPlan plan =
      plan_calibration(registry, h100_like(), Precision::fp64, {}, fixed_registers(64));
  EXPECT_EQ(find_variant(plan, CalibrationStage::csr_vector, 32, 256).rows_per_strip, 132 * 4 * 8);
}

TEST(PlanCalibration, LeavesOutVariantsThatCannotLaunch) {
  const FormatRegistry registry = gpu_catalogue();
  // 255 registers x 512 threads exceed the SM's 65536: no block of 512 can run.
  const CalibrationPlan plan =
      plan_calibration(registry, h100_like(), Precision::fp64, {}, fixed_registers(255));
  std::size_t blocks_of_512 = 0;
  for (const PlannedVariant& v : plan.variants) {
    if (v.stage == CalibrationStage::csr_vector && v.kernel.threads_per_row > 1 &&
        v.kernel.resources.threads_per_block == 512)
      ++blocks_of_512;
  }
  EXPECT_EQ(blocks_of_512, 0u);
  // The scalar kernel's assumed 32 registers launch at 512, so it keeps its variant.
  EXPECT_EQ(find_variant(plan, CalibrationStage::csr_vector, 1, 512).format,
            kCudaCsrScalarFormatId);
}

TEST(PlanCalibration, EllCoversAFullGridOfWidthsAndRowsPerBlockSize) {
  const FormatRegistry registry = gpu_catalogue();
  const CalibrationPlan plan =
      plan_calibration(registry, h100_like(), Precision::fp32, {}, fixed_registers(30));
  std::size_t ell_variants = 0;
  for (const PlannedVariant& v : plan.variants) {
    if (v.stage != CalibrationStage::ell) continue;
    ++ell_variants;
    std::set<std::int64_t> widths, rows, banded_widths;
    std::size_t random = 0, banded = 0;
    for (const SampleShape& s : v.samples) {
      widths.insert(s.row_length);
      rows.insert(s.rows);
      if (s.banded) {
        banded_widths.insert(s.row_length);
        ++banded;
      } else {
        ++random;
      }
    }
    EXPECT_EQ(widths, (std::set<std::int64_t>{1, 2, 4, 8, 16, 32}));
    EXPECT_EQ(random, widths.size() * rows.size());
    // Banded twins of widths 2, 8 and 32 at every rows (the ratio is a grid like the times),
    // on the first block size only.
    if (ell_variants == 1) {
      EXPECT_EQ(banded_widths, (std::set<std::int64_t>{2, 8, 32}));
      EXPECT_EQ(banded, banded_widths.size() * rows.size());
    } else {
      EXPECT_EQ(banded, 0u);
    }
    for (const SampleShape& s : v.samples) {
      if (s.banded) {
        SampleShape twin = s;
        twin.banded = false;
        EXPECT_NE(std::find(v.samples.begin(), v.samples.end(), twin), v.samples.end());
      }
    }
    EXPECT_EQ(*rows.begin(), 4096);
    // The top of the grid streams from DRAM: width 16 x the most rows is over 2x L2 in fp32.
    EXPECT_GT(16 * *rows.rbegin() * 8, static_cast<std::int64_t>(2 * h100_like().l2_bytes));
  }
  EXPECT_EQ(ell_variants, 2u);
}

// A composed format (the CPU-GPU split) is predicted as its parts: the format_bytes stage, which
// times every bytes-family format, leaves it out.
TEST(PlanCalibration, TimesNoComposedFormatAsABytesFormat) {
  ASSERT_NE(format_registry().find(kCpuGpuSplitFormatId), nullptr);
  const CalibrationPlan plan =
      plan_calibration(format_registry(), h100_like(), Precision::fp64, {}, fixed_registers(30));
  bool any_format_bytes = false;
  for (const PlannedVariant& v : plan.variants) {
    any_format_bytes = any_format_bytes || v.stage == CalibrationStage::format_bytes;
    EXPECT_NE(v.format, kCpuGpuSplitFormatId) << "stage " << static_cast<int>(v.stage);
  }
  EXPECT_TRUE(any_format_bytes);
}

TEST(PlanCalibration, UsesGpuFormatsOnTheGpuAndCpuFormatsOnTheCpu) {
  const FormatRegistry registry = gpu_catalogue();
  const CalibrationPlan gpu = plan_calibration(registry, h100_like(), Precision::fp64, {}, {});
  std::set<std::uint16_t> gpu_formats;
  for (const PlannedVariant& v : gpu.variants) gpu_formats.insert(v.format.value);
  EXPECT_EQ(gpu_formats,
            (std::set<std::uint16_t>{kCudaCsrVectorFormatId.value, kCusparseCsrFormatId.value,
                                     kCudaCsrScalarFormatId.value, kCudaEllFormatId.value,
                                     kCudaCooFormatId.value}));
  DeviceInfo cpu;
  cpu.name = "test cpu";
  cpu.sm_count = 2;
  cpu.l2_bytes = 1 << 20;
  const CalibrationPlan on_cpu = plan_calibration(registry, cpu, Precision::fp64, {}, {});
  std::set<std::uint16_t> cpu_formats;
  for (const PlannedVariant& v : on_cpu.variants) cpu_formats.insert(v.format.value);
  EXPECT_EQ(cpu_formats, (std::set<std::uint16_t>{kCpuCsrFormatId.value, kCpuCooFormatId.value}));
}

// The budget of the issue: both precisions in <= 2 minutes on an H100. The run is dominated by
// generating samples on the host and building them on the device; this bounds both per
// precision (at a few ns per generated and ~1 ns per built non-zero, ~10 s per precision).
TEST(PlanCalibration, H100PlanStaysWithinTheCalibrationBudget) {
  const FormatRegistry registry = gpu_catalogue();
  const CalibrationPlan plan =
      plan_calibration(registry, h100_like(), Precision::fp64, {}, fixed_registers(30));
  std::int64_t generated = 0, built = 0;
  std::size_t samples = 0;
  for (const CalibrationStage stage :
       {CalibrationStage::csr_vector, CalibrationStage::ell, CalibrationStage::coo,
        CalibrationStage::bytes, CalibrationStage::format_bytes, CalibrationStage::latency,
        CalibrationStage::cache_resident}) {
    generated += plan.generated_nnz(stage);
    built += plan.built_nnz(stage);
    samples += plan.sample_count(stage);
  }
  // (Model version 7 added 100 M generated and 0.5 G built: the beyond-L2 long-row samples;
  // version 9 ~30 M generated and 0.2 G built: short-row CSR samples that stream from DRAM;
  // version 10: ELL's banded twins at every rows (on one block size) and 6 more
  // cache_resident samples per variant, but ELL on two block sizes instead of three and up to
  // width 32; version 12: the banded twin of every cache_resident sample, 6 M generated and
  // 0.12 G built; version 31: the grid's 262144-row points that fit in L2, 0.17 G built. This
  // plan prints 515 M generated, 3.05 G built, 1260 samples.)
  EXPECT_LT(generated, 550'000'000);
  EXPECT_LT(built, 3'200'000'000);
  // cache_resident adds 36 samples per variant in fp64 (18 grid points, each with its banded
  // twin), each under 2.1M non-zeros (this plan: 828 of 1260).
  EXPECT_LT(samples, 1300u);
  EXPECT_EQ(plan.max_sample_nnz, static_cast<std::int64_t>(4 * h100_like().l2_bytes / 12));
}

TEST(PlanCalibration, RepeatsEveryCsrCooAndFormatBytesVariantOnCacheResidentSamples) {
  const FormatRegistry registry = gpu_catalogue();
  const CalibrationOptions options;
  const CalibrationPlan plan =
      plan_calibration(registry, h100_like(), Precision::fp64, options, fixed_registers(30));
  std::size_t bases = 0, repeats = 0;
  for (const PlannedVariant& v : plan.variants) {
    if (v.stage == CalibrationStage::csr_vector || v.stage == CalibrationStage::coo ||
        v.stage == CalibrationStage::format_bytes)
      ++bases;
    if (v.stage != CalibrationStage::cache_resident) continue;
    ++repeats;
    EXPECT_NE(v.base_stage, CalibrationStage::cache_resident);
    // The rows x row length grid's points that fit in L2 (not 262144 rows of 16 or 32 in
    // fp64), random, then each point's banded twin.
    const std::size_t grid =
        in_h100_l2_points(options.cache_resident_rows, options.cache_resident_row_lengths);
    ASSERT_EQ(grid,
              options.cache_resident_rows.size() * options.cache_resident_row_lengths.size() - 2);
    ASSERT_EQ(v.samples.size(), 2 * grid);
    for (std::size_t i = 0; i < grid; ++i) {
      EXPECT_FALSE(v.samples[i].banded);
      SampleShape twin = v.samples[i];
      twin.banded = true;
      EXPECT_EQ(v.samples[grid + i], twin);
    }
    for (const SampleShape& s : v.samples) {
      EXPECT_GE(s.rows, options.cache_resident_rows.front());
      // fp64 CSR, x and y of each stay inside an H100's 50 MB L2.
      EXPECT_LT(s.nnz() * 12 + s.rows * 24, h100_like().l2_bytes);
    }
  }
  EXPECT_GT(bases, 0u);
  EXPECT_EQ(repeats, bases);
}

TEST(CacheResidentFit, ClampsTheGridsCellsBeyondL2ToTheNearestRowsOfTheirRowLength) {
  // Rows 512, 2048, 8192 x lengths 2, 8, 32. Length 8's 8192-row point is beyond L2 (not
  // planned): it takes the 2048-row point of its length; length 32, sampled only at 2048 and
  // 8192, gives its 512-row cell the 2048 one's value.
  const std::vector<GridSample> sampled = {
      {.width = 2, .rows = 512, .ms = 0.5},  {.width = 2, .rows = 2048, .ms = 0.6},
      {.width = 2, .rows = 8192, .ms = 0.7}, {.width = 8, .rows = 512, .ms = 0.8},
      {.width = 8, .rows = 2048, .ms = 0.9}, {.width = 32, .rows = 2048, .ms = 1.1},
      {.width = 32, .rows = 8192, .ms = 1.2}};
  const std::vector<GridSample> full = complete_grid_by_rows(sampled);
  ASSERT_EQ(full.size(), 9u);
  EXPECT_TRUE(std::equal(sampled.begin(), sampled.end(), full.begin()));
  EXPECT_EQ(full[7], (GridSample{.width = 8, .rows = 8192, .ms = 0.9}));
  EXPECT_EQ(full[8], (GridSample{.width = 32, .rows = 512, .ms = 1.1}));
  const LogGridFit fit = fit_log_grid(full);  // a full grid: accepted
  EXPECT_NEAR(fit(8, 8192), 0.9, 1e-12);
  EXPECT_NEAR(fit(2, 8192), 0.7, 1e-12);
  // Already full: unchanged.
  EXPECT_EQ(complete_grid_by_rows(full), full);
}

TEST(PlanCalibration, GivesBsrACacheResidentGridOfDistinctWholeBlockShapes) {
  FormatRegistry registry = gpu_catalogue();
  registry.add(std::make_unique<CusparseBsrRules>(), never_built);
  const CalibrationPlan plan =
      plan_calibration(registry, h100_like(), Precision::fp64, {}, fixed_registers(30));
  std::size_t grids = 0;
  for (const PlannedVariant& v : plan.variants) {
    if (v.stage != CalibrationStage::cache_resident || v.format != kCusparseBsrFormatId) continue;
    ++grids;
    // The grid (fit_log_grid) takes each shape once.
    std::set<std::tuple<std::int64_t, std::int64_t, bool>> shapes;
    const std::uint32_t block_dim = v.params.as<CusparseBsrParams>("cusparse_bsr").block_dim;
    for (const SampleShape& s : v.samples) {
      EXPECT_EQ(s.block_dim, static_cast<std::int64_t>(block_dim));
      EXPECT_EQ(s.rows % s.block_dim, 0);
      EXPECT_EQ(s.row_length % s.block_dim, 0);
      EXPECT_TRUE(shapes.insert({s.rows, s.row_length, s.banded}).second)
          << s.rows << " x " << s.row_length << (s.banded ? " banded" : "");
    }
    // Rows 4096, 16384, 65536 x lengths 2, 4, 8, 16, 32 in whole blocks (2 x 2 keeps all five,
    // 4 x 4 rounds 2 up to 4) and 262144 rows of the lengths up to 8 (in L2); random and banded.
    EXPECT_EQ(shapes.size(), 2u * (3u * (block_dim == 2 ? 5u : 4u) + (block_dim == 2 ? 3u : 2u)));
  }
  EXPECT_EQ(grids, kFormatBytesVariants);
}

TEST(PlanCalibration, RefusesTooFewRowLengthsForThePiecewiseFit) {
  const FormatRegistry registry = gpu_catalogue();
  CalibrationOptions options;
  options.csr_row_lengths = {1, 2, 4, 8};
  try {
    plan_calibration(registry, h100_like(), Precision::fp64, options, {});
    FAIL() << "expected Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    EXPECT_STREQ(
        e.what(),
        "calibration options: csr_row_lengths leaves 4 lengths <= 64 for threads_per_row 1; "
        "the fit needs 5");
  }
}

// ---- end to end on the CPU device ----

CalibrationOptions quick_cpu_options() {
  CalibrationOptions options;
  options.max_sample_nnz = 1 << 15;
  options.warmup_runs = 1;
  options.timed_runs = 3;
  options.size_steps = 4;
  options.cache_resident_rows = {512, 2048};
  options.cache_resident_row_lengths = {2, 8};
  return options;
}

class CpuCalibration : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    device_ = make_cpu_device().release();
    calibration_ = new DeviceCalibration(
        calibrate_device(format_registry(), *device_, quick_cpu_options(),
                         [](const CalibrationProgress& p) { progress_->push_back(p); }));
  }
  static void TearDownTestSuite() {
    delete calibration_;
    delete device_;
  }
  static Device* device_;
  static DeviceCalibration* calibration_;
  static std::vector<CalibrationProgress>* progress_;
};
Device* CpuCalibration::device_ = nullptr;
DeviceCalibration* CpuCalibration::calibration_ = nullptr;
std::vector<CalibrationProgress>* CpuCalibration::progress_ = new std::vector<CalibrationProgress>;

TEST_F(CpuCalibration, FitsTheBytesModelAndCpuCooForBothPrecisions) {
  const bool has_cpu_coo = format_registry().find(kCpuCooFormatId) != nullptr;
  for (const Precision precision : {Precision::fp32, Precision::fp64}) {
    const ModelSet& set = calibration_->for_precision(precision);
    EXPECT_EQ(set.precision, precision);
    EXPECT_EQ(set.device_signature, device_->info().signature());
    EXPECT_EQ(set.records.find<CsrVectorRecord>(), nullptr);  // GPU-only families
    EXPECT_EQ(set.records.find<EllRecord>(), nullptr);
    const BytesRecord* bytes = set.records.find<BytesRecord>();
    ASSERT_NE(bytes, nullptr);
    ASSERT_TRUE(bytes->shared.has_value());
    EXPECT_GT(bytes->shared->time_vs_bytes.slope, 0.0) << "time must grow with bytes";
    EXPECT_EQ(bytes->shared->samples.size(), 4u);  // size_steps
    EXPECT_EQ(bytes->shared->time_vs_bytes.quality.sample_count, 4u);
    // format_bytes: cpu_csr's own line and its banded / random ratios at both sizes.
    ASSERT_EQ(bytes->formats.size(), 1u);
    const FormatBytesCalibration& own = bytes->formats[0];
    EXPECT_EQ(own.format, kCpuCsrFormatId);
    EXPECT_EQ(own.bytes.samples.size(), 2u);
    EXPECT_GT(own.bytes.time_vs_bytes.slope, 0.0);
    ASSERT_EQ(own.bytes.banded_ratio.size(), 2u);
    EXPECT_EQ(own.bytes.banded_ratio[0].x, own.bytes.samples[0].x);
    for (const SamplePoint& r : own.bytes.banded_ratio) EXPECT_GT(r.y, 0.0);
    EXPECT_TRUE(bytes->shared->banded_ratio.empty());  // the shared fallback times random only
    // cache_resident: cpu_csr's record (and cpu_coo's), measured / predicted on the 2 x 2 grid.
    ASSERT_EQ(set.cache_resident.size(), has_cpu_coo ? 2u : 1u);
    for (const CacheResidentCorrection& c : set.cache_resident) {
      EXPECT_EQ(c.ratio_vs_length_rows.widths, (std::vector<double>{2, 8}));
      EXPECT_EQ(c.ratio_vs_length_rows.rows, (std::vector<double>{512, 2048}));
      ASSERT_EQ(c.ratio_vs_length_rows.log_ms.size(), 4u);
      for (const double log_ratio : c.ratio_vs_length_rows.log_ms)
        EXPECT_TRUE(std::isfinite(log_ratio));
      EXPECT_GT(c.largest_footprint_bytes, 2048.0 * 8 * 8);  // its values alone
      // T_banded / T_random of the banded twins on the same grid.
      EXPECT_EQ(c.banded_ratio_vs_length_rows.widths, (std::vector<double>{2, 8}));
      EXPECT_EQ(c.banded_ratio_vs_length_rows.rows, (std::vector<double>{512, 2048}));
      ASSERT_EQ(c.banded_ratio_vs_length_rows.log_ms.size(), 4u);
      for (const double log_ratio : c.banded_ratio_vs_length_rows.log_ms)
        EXPECT_TRUE(std::isfinite(log_ratio));
    }
    const CooRecord* coo = set.records.find<CooRecord>();
    ASSERT_EQ(coo != nullptr, has_cpu_coo);
    if (has_cpu_coo) {
      ASSERT_EQ(coo->variants.size(), 1u);
      EXPECT_EQ(coo->variants[0].samples.size(), 4u);  // the random ones: the fit's
      EXPECT_EQ(coo->variants[0].banded_ratio.size(), 1u);
      EXPECT_EQ(coo->variants[0].samples.back().x, 32768.0);  // max_sample_nnz
      EXPECT_GT(coo->variants[0].time_vs_nnz.slope, 0.0);
    }
  }
}

// Paper 003 Eq. 6 on the CPU device: fc from the coo stage's cpu_coo line on all cores; no
// GPU side (no ELL samples), and no paper 000 model (no transfer is ever timed).
TEST_F(CpuCalibration, FillsTheCpuSideOfThePaper003ModelFromCpuCoo) {
  const bool has_cpu_coo = format_registry().find(kCpuCooFormatId) != nullptr;
  for (const Precision precision : {Precision::fp32, Precision::fp64}) {
    const ModelSet& set = calibration_->for_precision(precision);
    EXPECT_EQ(set.records.find("blocked_ell"), nullptr);
    const CpuGpuTimeCoefficients* cpu_gpu = set.records.find<CpuGpuTimeCoefficients>();
    if (!has_cpu_coo) {
      EXPECT_EQ(cpu_gpu, nullptr);
      continue;
    }
    ASSERT_NE(cpu_gpu, nullptr);
    const CpuGpuTimeCoefficients& c = *cpu_gpu;
    const int cores = device_->info().sm_count;
    EXPECT_EQ(c.cpu_cores, cores);
    EXPECT_GT(c.cpu_operations_per_ms, 0.0) << "the CPU side's slope must be positive";
    ASSERT_NE(set.records.find<CooRecord>(), nullptr);
    ASSERT_EQ(set.records.find<CooRecord>()->variants.size(), 1u);
    const double slope_ms_per_nnz = set.records.find<CooRecord>()->variants[0].time_vs_nnz.slope;
    EXPECT_DOUBLE_EQ(c.cpu_operations_per_ms, 2.0 / (slope_ms_per_nnz * cores));
    if (cores >= 2) {
      // Eq. 6 runs the COO part on nc - 1 cores: the measured slope scaled by nc / (nc - 1).
      EXPECT_NEAR(cpu_coo_time_ms(1'000'000, 1.0, c),
                  1e6 * slope_ms_per_nnz * cores / (cores - 1.0),
                  1e-9 * 1e6 * slope_ms_per_nnz);
    }
    // The host's banded ratio: the coo stage's, of its twin at the largest sample.
    const std::vector<SamplePoint>& banded = set.records.find<CooRecord>()->variants[0].banded_ratio;
    ASSERT_EQ(banded.size(), 1u);
    EXPECT_DOUBLE_EQ(c.cpu_banded_ratio, banded_ratio_at(banded, banded.back().x));
    EXPECT_GT(c.cpu_banded_ratio, 0.0);
    EXPECT_EQ(c.gpu_streaming_processors, 0);
    EXPECT_EQ(c.gpu_operations_per_ms_per_sp, 0.0);
    // Nothing crosses a bus on the CPU device: no copy is timed.
    EXPECT_EQ(c.host_device_bytes_per_ms, 0.0);
    EXPECT_EQ(c.host_device_copy_latency_ms, 0.0);
  }
}

// The host's rates beside a GPU: fc from the random samples' slope, rho the banded twins' slope
// over it (their intercepts, the fixed cost of a multiply, left out as Eq. 6 leaves them).
TEST(HostCooRates, RecoverTheRandomSlopeAndTheBandedRatioOfSyntheticTimings) {
  std::vector<SamplePoint> random, banded;
  for (double nnz = 1 << 20; nnz <= 1 << 22; nnz *= 2) {
    random.push_back({nnz, 0.03 + 8e-7 * nnz});
    banded.push_back({nnz, 0.02 + 0.3 * 8e-7 * nnz});
  }
  const std::optional<HostCooRates> rates = fit_host_coo_rates(random, banded);
  ASSERT_TRUE(rates.has_value());
  std::printf("random %.4g ms/nnz, banded ratio %.6f\n", rates->random_ms_per_nnz,
              rates->banded_ratio);
  EXPECT_NEAR(rates->random_ms_per_nnz, 8e-7, 8e-7 * 1e-9);
  EXPECT_NEAR(rates->banded_ratio, 0.3, 1e-9);
}

// Rows of 8 at s = a + b / 8 per non-zero, rows of 1 at a + b: the row's own cost and the
// non-zeros' come apart, and the banded twins' ratio is the non-zeros' own.
TEST(HostCooRates, SeparateARowsOwnCostFromItsNonZeros) {
  const double a = 4e-7, b = 8e-7, rho = 0.25;
  const HostCooRates at8{.random_ms_per_nnz = a + b / 8, .banded_ratio = (rho * a + b / 8) / (a + b / 8)};
  const HostCooRates split = with_row_cost(at8, a + b, 8);
  EXPECT_NEAR(split.random_ms_per_nnz, a, 1e-18);
  EXPECT_NEAR(split.ms_per_row, b, 1e-18);
  EXPECT_NEAR(split.banded_ratio, rho, 1e-12);
  // Single-entry rows no dearer per non-zero: nothing to separate.
  EXPECT_EQ(with_row_cost(at8, a + b / 8, 8), at8);
  EXPECT_EQ(with_row_cost(at8, a + b, 1), at8);
}

// The host path's samples, split at their width: a host part of one entry (the round trip), and
// host parts of one chunk and of two chunks of the same size (the wake-up: the same work a
// thread, a second thread started), each one touched row beside an x of the same width.
TEST(HostPathSamples, HostPartsOfOneEntryOneChunkAndTwoChunksOfTheSameSize) {
  const HostPathSamples samples = host_path_samples(7);
  const auto host = [](const CsrMatrix<double>& m) {
    return make_cpu_gpu_split_layout<double>(m, kHostPathSampleWidth).host;
  };
  const HostCooPart<double> one = host(samples.one_entry);
  EXPECT_EQ(one.nnz(), 1);
  EXPECT_EQ(one.chunk_count(), 1);
  const HostCooPart<double> one_chunk = host(samples.one_chunk);
  const HostCooPart<double> two_chunks = host(samples.two_chunks);
  EXPECT_EQ(one_chunk.chunk_count(), 1);
  EXPECT_EQ(two_chunks.chunk_count(), 2);
  EXPECT_EQ(two_chunks.chunk_offsets[1], one_chunk.nnz()) << "a chunk of two as large as the one";
  EXPECT_EQ(two_chunks.nnz(), 2 * one_chunk.nnz());
  EXPECT_EQ(one_chunk.rows.size(), 1u);
  EXPECT_EQ(two_chunks.rows.size(), 1u);
  EXPECT_EQ(samples.one_chunk.cols, samples.two_chunks.cols);
  for (const CsrMatrix<double>* m : {&samples.one_entry, &samples.one_chunk, &samples.two_chunks})
    EXPECT_EQ(m->rows, kHostPathSampleRows);
}

TEST(HostCooRates, RefuseOneSizeOrASlopeThatIsNotPositive) {
  const std::vector<SamplePoint> two{{1e6, 1.0}, {2e6, 2.0}};
  const std::vector<SamplePoint> one{{1e6, 1.0}};
  const std::vector<SamplePoint> falling{{1e6, 1.0}, {2e6, 0.9}};
  EXPECT_FALSE(fit_host_coo_rates(one, two).has_value());
  EXPECT_FALSE(fit_host_coo_rates(two, one).has_value());
  EXPECT_FALSE(fit_host_coo_rates(two, falling).has_value()) << "a band without a rate";
  EXPECT_FALSE(fit_host_coo_rates(falling, two).has_value());
  ASSERT_TRUE(fit_host_coo_rates(two, two).has_value());
  EXPECT_DOUBLE_EQ(fit_host_coo_rates(two, two)->banded_ratio, 1.0);
}

// The host part's copies: ms = latency + bytes / bandwidth per direction; the slower bandwidth
// and the larger latency are kept.
TEST(HostDeviceCopies, FitsTheSlowerBandwidthAndTheLargerLatency) {
  std::vector<HostCopySample> samples;
  for (std::uint64_t bytes = 4096; bytes <= (std::uint64_t{64} << 20); bytes *= 4)
    samples.push_back({.bytes = bytes,
                       .device_to_host_ms = 0.008 + static_cast<double>(bytes) / 2.5e7,
                       .host_to_device_ms = 0.006 + static_cast<double>(bytes) / 2.0e7});
  CpuGpuTimeCoefficients c{.cpu_cores = 16, .cpu_operations_per_ms = 1e5};
  fit_host_device_copies(samples, c);
  EXPECT_NEAR(c.host_device_bytes_per_ms, 2.0e7, 2.0e7 * 1e-6);
  EXPECT_NEAR(c.host_device_copy_latency_ms, 0.008, 1e-6);
  EXPECT_EQ(c.cpu_cores, 16);  // the rest untouched
}

TEST(HostDeviceCopies, LeavesTheCopiesUncalibratedWithoutTwoSizes) {
  CpuGpuTimeCoefficients c{.host_device_bytes_per_ms = 5.0, .host_device_copy_latency_ms = 1.0};
  const std::vector<HostCopySample> one{{.bytes = 4096, .device_to_host_ms = 0.01, .host_to_device_ms = 0.01}};
  fit_host_device_copies(one, c);
  EXPECT_EQ(c.host_device_bytes_per_ms, 0.0);
  EXPECT_EQ(c.host_device_copy_latency_ms, 0.0);
  fit_host_device_copies({}, c);
  EXPECT_EQ(c.host_device_bytes_per_ms, 0.0);
}

TEST_F(CpuCalibration, ReportsProgressPerPrecisionAndStage) {
  ASSERT_FALSE(progress_->empty());
  std::set<std::string> stages;
  for (const CalibrationProgress& p : *progress_) {
    stages.insert(p.stage);
    EXPECT_LE(p.done, p.total) << p.stage;
  }
  EXPECT_TRUE(stages.contains("fp32 bytes"));
  EXPECT_TRUE(stages.contains("fp64 bytes"));
  EXPECT_TRUE(stages.contains("fp64 format_bytes"));
  EXPECT_TRUE(stages.contains("fp64 cache_resident"));
  const CalibrationProgress& last = progress_->back();
  EXPECT_EQ(last.stage, "fp64 cache_resident");
  EXPECT_EQ(last.detail, "fitted");
  EXPECT_EQ(last.done, last.total);
}

TEST_F(CpuCalibration, RoundTripsThroughJson) {
  const std::string text = device_calibration_to_json(*calibration_);
  const DeviceCalibration back = device_calibration_from_json(text, device_->info().signature());
  EXPECT_EQ(back, *calibration_);
  EXPECT_EQ(back.device.l2_bytes, device_->info().l2_bytes);
}

// A GPU's calibration names its host (DeviceInfo::host) in its signature and keeps it in its
// device record, so it reads back on the same GPU and host and is refused on another host.
TEST_F(CpuCalibration, RoundTripsTheHostOfAGpu) {
  DeviceCalibration on_host = *calibration_;
  on_host.device = h100_like();
  on_host.device.host = "Intel(R) Xeon(R) Processor x16";
  on_host.fp32.device_signature = on_host.fp64.device_signature = on_host.device.signature();
  const std::string text = device_calibration_to_json(on_host);
  EXPECT_EQ(device_calibration_from_json(text, on_host.device.signature()), on_host);
  DeviceInfo other_host = on_host.device;
  other_host.host = "AMD EPYC 9454 48-Core Processor x16";
  EXPECT_THROW(device_calibration_from_json(text, other_host.signature()), Error);
}

TEST_F(CpuCalibration, RefusesAnotherDeviceSignature) {
  const std::string text = device_calibration_to_json(*calibration_);
  try {
    device_calibration_from_json(text, h100_like().signature());
    FAIL() << "expected Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::failed_precondition);
    EXPECT_EQ(std::string(e.what()), "device calibration was made on device \"" +
                                         device_->info().signature() + "\", this device is \"" +
                                         h100_like().signature() + "\": recalibrate");
  }
}

TEST_F(CpuCalibration, RefusesAnotherModelVersion) {
  nlohmann::json j = nlohmann::json::parse(device_calibration_to_json(*calibration_));
  j["model_version"] = kModelVersion + 1;
  try {
    device_calibration_from_json(j.dump(), device_->info().signature());
    FAIL() << "expected Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::failed_precondition);
    EXPECT_NE(std::string(e.what()).find("model_version " + std::to_string(kModelVersion + 1)),
              std::string::npos)
        << e.what();
  }
}

TEST_F(CpuCalibration, RefusesModelSetsUnderTheWrongPrecision) {
  nlohmann::json j = nlohmann::json::parse(device_calibration_to_json(*calibration_));
  std::swap(j["fp32"], j["fp64"]);
  try {
    device_calibration_from_json(j.dump(), device_->info().signature());
    FAIL() << "expected Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("model set is for fp64, wanted fp32"), std::string::npos)
        << e.what();
  }
}

TEST_F(CpuCalibration, PredictsCpuCsrThroughTheBytesModel) {
  const ModelPredictor predictor(calibration_->fp64);
  const CsrMatrix<double> m = uniform_row_length_sample(20000, 10, 9);
  const MatrixFeatures f = sample_features(m);
  const Candidate csr{.format = kCpuCsrFormatId, .params = {}, .launch = {}};
  const CpuCsrRules cpu_csr;
  const Prediction small = predictor.predict_ms(cpu_csr, f, csr, device_->info());
  MatrixFeatures larger = f;
  larger.rows *= 10;
  larger.cols *= 10;
  larger.nnz *= 10;
  larger.distribution = {{10, larger.rows}};
  const Prediction large = predictor.predict_ms(cpu_csr, larger, csr, device_->info());
  EXPECT_GT(small.ms, 0.0);
  EXPECT_GT(large.ms, small.ms);
}

TEST_F(CpuCalibration, DrawsOnePlotPerRecordWithItsSamples) {
  const std::vector<NamedSvg> plots = model_set_plots(calibration_->fp32);
  const ModelSet& set = calibration_->fp32;
  const CooRecord* coo = set.records.find<CooRecord>();
  const std::size_t records = (coo != nullptr ? coo->variants.size() : 0) + 1;  // + bytes
  ASSERT_EQ(plots.size(), records);
  const NamedSvg& bytes = plots.back();
  EXPECT_EQ(bytes.file_name, "fp32_bytes.svg");
  std::size_t circles = 0;
  for (std::size_t at = 0; (at = bytes.svg.find("class=\"sample\"", at)) != std::string::npos; ++at)
    ++circles;
  EXPECT_EQ(circles, set.records.find<BytesRecord>()->shared->samples.size());
  EXPECT_NE(bytes.svg.find("class=\"fit\""), std::string::npos);
}

// ---- accuracy statistics ----

TEST(SpearmanRankCorrelation, IsOneForAnyIncreasingRelation) {
  const std::vector<double> a{1, 2, 3, 4, 5}, b{0.1, 0.5, 2, 30, 31};
  EXPECT_DOUBLE_EQ(*spearman_rank_correlation(a, b), 1.0);
}

TEST(SpearmanRankCorrelation, IsMinusOneForAReversedOrder) {
  const std::vector<double> a{1, 2, 3, 4}, b{9, 7, 5, 1};
  EXPECT_DOUBLE_EQ(*spearman_rank_correlation(a, b), -1.0);
}

TEST(SpearmanRankCorrelation, GivesTiesTheirMeanRank) {
  // b's ranks: 1, 2, 3.5, 5, 3.5. r = 8 / sqrt(10 * 9.5).
  const std::vector<double> a{1, 2, 3, 4, 5}, b{5, 6, 7, 8, 7};
  EXPECT_NEAR(*spearman_rank_correlation(a, b), 8.0 / std::sqrt(95.0), 1e-12);
}

TEST(SpearmanRankCorrelation, IsUndefinedForConstantsAndSinglePairs) {
  const std::vector<double> a{1, 2, 3}, flat{4, 4, 4};
  EXPECT_FALSE(spearman_rank_correlation(a, flat).has_value());
  EXPECT_FALSE(
      spearman_rank_correlation(std::vector<double>{1}, std::vector<double>{2}).has_value());
  EXPECT_THROW(spearman_rank_correlation(a, std::vector<double>{1, 2}), Error);
}

TEST(Quantile, InterpolatesBetweenClosestRanks) {
  EXPECT_DOUBLE_EQ(quantile({4, 1, 3, 2}, 0.5), 2.5);
  EXPECT_DOUBLE_EQ(quantile({4, 1, 3, 2}, 0.9), 3.7);
  EXPECT_DOUBLE_EQ(quantile({7}, 0.9), 7.0);
  EXPECT_THROW(quantile({}, 0.5), Error);
}

TEST(SummarizeAccuracy, ChecksTheModelsFavouriteAgainstTheMeasuredBest) {
  const std::vector<AccuracyPoint> points{
      // m1: the model's favourite (a) measures 1.05, the best (b) 1.0: within 10 %.
      {"m1", Precision::fp64, "cuda_ell", "ell", "a", 0.5, 1.05},
      {"m1", Precision::fp64, "cuda_coo", "coo", "b", 0.9, 1.0},
      {"m1", Precision::fp64, "cuda_coo", "coo", "c", 2.0, 4.0},
      // m2: the favourite (d) measures 2.0, the best (e) 1.0: not within.
      {"m2", Precision::fp64, "cuda_ell", "ell", "d", 0.1, 2.0},
      {"m2", Precision::fp64, "cuda_coo", "coo", "e", 0.2, 1.0},
  };
  const AccuracyReport r = summarize_accuracy(points);
  ASSERT_EQ(r.matrices.size(), 2u);
  EXPECT_TRUE(r.matrices[0].top_within_tolerance);
  EXPECT_EQ(r.matrices[0].predicted_best, "a");
  EXPECT_EQ(r.matrices[0].measured_best, "b");
  EXPECT_FALSE(r.matrices[1].top_within_tolerance);
  EXPECT_DOUBLE_EQ(r.fraction_top_within_tolerance, 0.5);
  EXPECT_DOUBLE_EQ(*r.matrices[0].spearman, 0.5);  // ranks (1,2,3) vs (2,1,3)
  EXPECT_DOUBLE_EQ(*r.matrices[1].spearman, -1.0);
  // coo errors: 0.1, 0.5, 0.8 -> median 0.5; ell errors: 0.5238..., 0.95.
  ASSERT_EQ(r.families.size(), 2u);
  EXPECT_EQ(r.families[0].name, "coo");
  EXPECT_EQ(r.families[0].count, 3u);
  EXPECT_NEAR(r.families[0].median_abs_relative_error, 0.5, 1e-12);
  EXPECT_NEAR(r.families[0].p90_abs_relative_error, 0.74, 1e-12);
  const std::string md = accuracy_markdown(r);
  EXPECT_NE(md.find("within 10 % of the measured best on 1 of 2"), std::string::npos) << md;
  EXPECT_NE(md.find("| m2 | fp64 | 2 | -1.00 | d (2.0000) | e (1.0000) | no |"), std::string::npos)
      << md;
}

TEST(SummarizeAccuracy, RefusesANonPositiveMeasuredTime) {
  const std::vector<AccuracyPoint> points{{"m", Precision::fp32, "f", "ell", "x", 1.0, 0.0}};
  EXPECT_THROW(summarize_accuracy(points), Error);
}

}  // namespace
}  // namespace spmvd
