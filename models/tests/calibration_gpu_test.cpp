// Calibration end to end on the GPU: every stage runs on the registry's own CUDA formats, the
// result goes into a real plan store and comes back equal, and its models predict. Skips
// visibly without a GPU. A reduced sample plan keeps it to seconds; `spmv-calibrate` runs the
// full one.

#include <gtest/gtest.h>

#include <cstdio>

#include "db/sqlite_plan_store.hpp"
#include "kernels/device.hpp"
#include "kernels/format_registry.hpp"
#include "kernels/formats/cuda_bce/cuda_bce_rules.hpp"
#include "kernels/formats/cuda_csr_vector/cuda_csr_vector_rules.hpp"
#include "kernels/formats/cuda_dia/cuda_dia_rules.hpp"
#include "kernels/formats/cuda_strip/cuda_strip_rules.hpp"
#include "kernels/formats/cusparse_bsr/cusparse_bsr_rules.hpp"
#include "models/calibration.hpp"
#include "models/device_calibration.hpp"
#include "models/families/coo/coo_record.hpp"
#include "models/model_predictor.hpp"

namespace spmvd {
namespace {

CalibrationOptions reduced_plan() {
  CalibrationOptions o;
  o.timed_runs = 3;
  o.max_sample_nnz = std::int64_t{1} << 20;
  o.csr_row_lengths = {1, 2, 4, 8, 16, 32, 64};
  o.csr_block_sizes = {256};
  o.ell_block_sizes = {256, 512};  // the second takes the first's banded ratio
  o.coo_block_sizes = {256};
  o.size_steps = 4;
  return o;
}

TEST(GpuCalibration, RunsEveryStageStoresAndPredicts) {
  if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA GPU visible";
  auto device = make_cuda_device(0);
  std::vector<std::string> stages;
  const DeviceCalibration calibration =
      calibrate_device(format_registry(), *device, reduced_plan(), [&](const CalibrationProgress& p) {
        if (stages.empty() || stages.back() != p.stage) stages.push_back(p.stage);
      });
  for (const auto& s : stages) std::printf("calibrated stage: %s\n", s.c_str());
  for (const ModelSet* set : {&calibration.fp32, &calibration.fp64}) {
    const CsrVectorRecord* csr_vector = set->records.find<CsrVectorRecord>();
    const EllRecord* ell_record = set->records.find<EllRecord>();
    const CooRecord* coo = set->records.find<CooRecord>();
    const BytesRecord* bytes = set->records.find<BytesRecord>();
    ASSERT_TRUE(csr_vector != nullptr && ell_record != nullptr && coo != nullptr &&
                bytes != nullptr);
    EXPECT_FALSE(csr_vector->variants.empty());
    EXPECT_FALSE(ell_record->variants.empty());
    EXPECT_FALSE(coo->variants.empty());
    EXPECT_FALSE(bytes->formats.empty());
    EXPECT_GT(set->launch_floor_ms, 0.0);
    EXPECT_LT(set->launch_floor_ms, 0.1) << "a launch is microseconds, not a tenth of a ms";
    // Every ELL record has a banded ratio over width x rows (measured on one block size).
    ASSERT_EQ(ell_record->variants.size(), 2u);
    for (const EllCalibration& ell : ell_record->variants) {
      EXPECT_EQ(ell.banded_ratio_vs_width_rows.widths, (std::vector<double>{2, 8, 32}));
      EXPECT_GE(ell.banded_ratio_vs_width_rows.rows.size(), 2u);
    }
    EXPECT_EQ(ell_record->variants[0].banded_ratio_vs_width_rows,
              ell_record->variants[1].banded_ratio_vs_width_rows);
    // BSR: the base blocks per block row and one point per kBsrBlockRowLengths.
    std::size_t bsr_records = 0;
    for (const FormatBytesCalibration& own : bytes->formats) {
      if (own.format != kCusparseBsrFormatId) continue;
      ++bsr_records;
      ASSERT_EQ(own.block_row_ratio.size(), 1 + std::size(kBsrBlockRowLengths));
      EXPECT_EQ(own.block_row_ratio.front().y, 1.0);
      for (const SamplePoint& p : own.block_row_ratio) EXPECT_GT(p.y, 0.0);
      // In L2 more blocks a block row take longer: a chain.
      EXPECT_GT(own.block_row_chain.slope, 0.0);
      std::printf("BSR %s: %.2f us + %.3f us a block of a block row\n",
                  to_string(own.params).c_str(), 1e3 * own.block_row_chain.intercept,
                  1e3 * own.block_row_chain.slope);
    }
    EXPECT_EQ(bsr_records, 2u);
    // Every cache-resident record: kappa and the banded ratio of its twins on the same grid;
    // cuda_dia's (a bands-only record: its grid is of bands) kappa alone.
    EXPECT_FALSE(set->cache_resident.empty());
    std::size_t dia_in_l2 = 0;
    for (const CacheResidentCorrection& c : set->cache_resident) {
      if (c.format == kCudaDiaFormatId) {
        ++dia_in_l2;
        EXPECT_FALSE(c.ratio_vs_length_rows.log_ms.empty());
        EXPECT_TRUE(c.banded_ratio_vs_length_rows.log_ms.empty());
        continue;
      }
      EXPECT_EQ(c.banded_ratio_vs_length_rows.widths, c.ratio_vs_length_rows.widths);
      EXPECT_EQ(c.banded_ratio_vs_length_rows.rows, c.ratio_vs_length_rows.rows);
      EXPECT_EQ(c.banded_ratio_vs_length_rows.log_ms.size(), c.ratio_vs_length_rows.log_ms.size());
    }
    EXPECT_EQ(dia_in_l2, 1u);
    // BCE's one launch has a floor of its own per kernel it offers on the tiny sample, above
    // the launch floor: it reads its tile and block tables before any row.
    std::size_t bce_floors = 0;
    for (const ComposedLaunchFloor& floor : set->composed_launch_floors) {
      if (floor.format != kCudaBceFormatId) continue;
      ++bce_floors;
      std::printf("%s BCE launch floor %s: %.4f ms (launch floor %.4f)\n",
                  std::string(to_string(set->precision)).c_str(), to_string(floor.params).c_str(),
                  floor.floor_ms, set->launch_floor_ms);
      EXPECT_GT(floor.floor_ms, set->launch_floor_ms);
    }
    EXPECT_EQ(bce_floors, 2u) << "the paper and hopper kernels";
    // BCE's block-wide rows: a wave time per block size it offers, each a latency chain of a
    // few dependent loads and a block reduction (about 1-2 us on an H100), more than nothing
    // and less than a launch floor a wave.
    EXPECT_EQ(set->row_block_waves.size(), kBceBlockSizes.size());
    for (const RowBlockWave& wave : set->row_block_waves) {
      std::printf("%s row block wave at block size %u: %.4f ms\n",
                  std::string(to_string(set->precision)).c_str(), wave.block_size, wave.wave_ms);
      EXPECT_GT(wave.wave_ms, 0.0);
      EXPECT_LT(wave.wave_ms, set->launch_floor_ms);
    }
    // Every format built on the host has its build rates, the composed ones (BCE) included.
    for (const FormatId composed : {kCudaBceFormatId, kCudaStripFormatId})
      EXPECT_NE(host_build_rate(set->host_build_rates, composed), nullptr)
          << "format " << composed.value << " has no build rate";
    const HostBuildRate* bce_build = host_build_rate(set->host_build_rates, kCudaBceFormatId);
    ASSERT_NE(bce_build, nullptr);
    std::printf("%s BCE build: %.1f ns a nonzero, %.2f ns a device byte\n",
                std::string(to_string(set->precision)).c_str(), bce_build->ns_per_nonzero,
                bce_build->ns_per_device_byte);
    EXPECT_GT(bce_build->ns_per_device_byte, 0.0);
  }

  // Through the real store and back.
  const std::string signature = device->info().signature();
  SqlitePlanStore store({.path = ":memory:"});
  store.put_calibration(signature, kModelVersion, device_calibration_to_json(calibration));
  const auto stored = store.find_calibration(signature, kModelVersion);
  ASSERT_TRUE(stored.has_value());
  EXPECT_TRUE(device_calibration_from_json(*stored, signature) == calibration);

  // A banded 1M-row matrix of 8 per row: CSR vector with 4 lanes predicted in a sane range
  // (above the floor, below a millisecond: ~100 MB at >1 TB/s).
  const ModelPredictor predictor(calibration.fp64);
  MatrixFeatures f;
  f.rows = f.cols = 1 << 20;
  f.nnz = f.rows * 8;
  f.row_length_min = f.row_length_max = 8;
  f.row_length_mean = 8.0;
  f.distribution = {{8, f.rows}};
  f.mean_row_span_fraction = 8.0 / static_cast<double>(f.cols);
  Candidate c;
  c.format = FormatId{2};  // cuda_csr_vector
  c.launch = {.block_size = 256, .threads_per_row = 4, .grid_size = 2112};
  const Prediction p = predictor.predict_ms(CudaCsrVectorRules{}, f, c, device->info());
  std::printf("predicted cuda_csr_vector t=4 on 1M x 8 banded, fp64: %.4f ms\n", p.ms);
  EXPECT_GT(p.ms, calibration.fp64.launch_floor_ms);
  EXPECT_LT(p.ms, 1.0);
}

}  // namespace
}  // namespace spmvd
