#pragma once
// What a calibration runs, as data: its options, its stages, the sample shapes and the planned
// variants (one per calibration record) that plan_calibration (models/calibration.hpp) lists and
// the stages (models/calibration/stage.hpp) time and fit; and the sample constants that more
// than one stage shares.

#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>
#include <vector>

#include "core/format_id.hpp"
#include "core/format_params.hpp"
#include "core/precision.hpp"
#include "models/compiled_kernel_resources.hpp"
#include "models/families/coo/coo_model.hpp"
#include "models/performance_model.hpp"

namespace spmvd {

struct CalibrationOptions {
  int warmup_runs = 2;  // untimed applies after building a sample (paper 004's beta runs)
  int timed_runs = 7;   // individually timed applies (101 below 0.05 ms); the median is kept
  // Non-zeros of the largest CSR-vector, COO and bytes sample (the largest ELL sample holds 4x
  // this). 0: enough that a fp64 CSR sample is 4x the device's L2, so the large samples stream
  // from DRAM as the paper's "very large sparse matrices" do, clamped to [2^16, 2^25].
  std::int64_t max_sample_nnz = 0;
  // Row lengths c of the CSR-vector samples (Fig. 3); threads_per_row t uses c <= max(64, 4t).
  std::vector<std::int64_t> csr_row_lengths{1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128};
  std::vector<std::uint32_t> csr_block_sizes{128, 256, 512};
  // Up to 32: beyond, the ELL model scales time with width (one thread walks its row), which
  // the grid itself showed at every rows (width 64 took 1.8-2x width 32 on an H100). Width 64
  // at a million rows was the calibration's largest sample (67 M entries); without it the
  // H100's ELL median error went from 7 to 9 %, its top candidate stayed the same.
  std::vector<std::int64_t> ell_widths{1, 2, 4, 8, 16, 32};
  // ELL's grid at the ends of the tuner's block sizes (128, 256, 512); 256 takes the nearest.
  // The grids differ by a few % between block sizes: without 256's own, the H100's top
  // candidate and ELL's median error (7-8 %) stayed the same on two suites, and the stage,
  // the calibration's longest, is a third shorter.
  std::vector<std::uint32_t> ell_block_sizes{128, 512};
  // cuda_coo: one variant per entries per thread E (which sets its time,
  // models/families/coo/coo_model.hpp) and block size.
  std::vector<std::uint32_t> coo_block_sizes{256};
  std::vector<std::uint32_t> coo_entries_per_thread{2, 8, 32};  // cuda_coo's kCooEntriesPerThread
  // Row length of the COO and bytes samples (the COO model's row writes:
  // models/families/coo/row_writes.hpp).
  std::int64_t coo_row_length = kCooSampleRowLength;
  int size_steps = 8;  // COO and bytes: max_sample_nnz / 2^(size_steps - 1) ... max, doubling
  // The cache_resident stage's grid of random samples, rows x row length: from a few thousand
  // rows (one partial wave, latency chains) through 65536 (the GPU filled, still near the
  // launch floor) to 262144, where a short-row matrix streams from L2 at L2's own throughput:
  // with the grid ending at 65536, matrices of 0.2-0.6M short rows whose 33-46 MB stay in an
  // H100's L2 measured 0.44-0.84 of their predictions, unevenly by format (Franz6-x48, 35 MB:
  // cuda_sell 0.58, cuda_ell 0.70, so model-only kept ELL at 1.20x SELL's time; H100,
  // 2026-11-25, docs/TUNER.md). A grid point whose CSR is larger than the device's L2 is not
  // planned (cache_resident_stage.cpp): beyond L2 the family models hold unchanged.
  std::vector<std::int64_t> cache_resident_rows{4096, 16384, 65536, 262144};
  std::vector<std::int64_t> cache_resident_row_lengths{2, 4, 8, 16, 32};
  std::uint64_t seed = 20110101;
};

enum class CalibrationStage { csr_vector, ell, coo, bytes, latency, format_bytes, cache_resident };
std::string_view to_string(CalibrationStage stage) noexcept;

// Rows of the tiny latency sample.
inline constexpr std::int64_t kLatencySampleRows = 1024;
// Block size of a BSR record's samples (format_bytes and cache_resident): dense blocks of the
// record's own block size, which it stores without fill. (Version 9 gave both records dense
// 4 x 4 blocks; a 2 x 2 BSR of those reads x in aligned pairs of blocks, which real matrices
// do not offer: on an H100 it streamed 1.5 TB/s there and 1.0-1.35 on bcsstk16-x64 and the
// 3-D stencils.) kBsrDefaultSampleBlockDim where params carry no block size.
inline constexpr std::int64_t kBsrDefaultSampleBlockDim = 4;
// Throws Error(invalid_argument) when params are not cusparse_bsr's.
std::int64_t bsr_sample_block_dim(const FormatParams& params);
// The long row of the latency stage's critical-path pair (a sample of as many rows of one entry)
// and of format_bytes' beyond-L2 pair.
inline constexpr std::int64_t kLongRowLength = 65536;
// format_bytes' in-L2 pair: a sample of this many rows of one entry, with and without one row
// of all its columns. Short enough that the padded slice a SELL format builds around the row
// (64 rows x 4096 x 12 bytes = 3 MB) stays in L2 — at kLongRowLength it is 16-50 MB, and
// cuSPARSE SELL's step doubles.
inline constexpr std::int64_t kInL2LongRowLength = 4096;

// One sample matrix: rows x rows, every row holding row_length non-zeros; with long_row > 0,
// row 0 instead holds long_row columns spread over all of them (with_long_row); with banded,
// the columns of every row
// are contiguous around the diagonal (banded_row_length_sample); with renumbered_band (and not
// banded), that band with its rows and columns renumbered at random (renumber_symmetric): a
// band's structure without its locality, the random end of a format offered on structure
// alone (EHYB); with mixed_lengths, a band's (or renumbered band's) rows hold row_length
// entries on average, of several lengths (banded_mixed_length_sample); with block_dim b > 1,
// the non-zeros come in dense b x b blocks (blocked_sample of the pattern of rows / b rows of
// row_length / b entries; rows and row_length are multiples of b).
struct SampleShape {
  std::int64_t rows = 0;
  std::int64_t row_length = 0;
  std::int64_t long_row = 0;
  bool banded = false;
  std::int64_t block_dim = 1;
  bool renumbered_band = false;
  bool mixed_lengths = false;
  std::int64_t nnz() const noexcept {  // on average, with mixed_lengths
    return rows * row_length + (long_row > 0 ? long_row - row_length : 0);
  }
  friend auto operator<=>(const SampleShape&, const SampleShape&) = default;
};

// One calibration record to produce: which format is timed with which launch, on which samples.
struct PlannedVariant {
  CalibrationStage stage = CalibrationStage::bytes;
  FormatId format;
  CalibratedKernel kernel;               // block size, registers, lanes per row
  bool registers_measured = false;       // false: registers_per_thread is the documented assumption
  std::int64_t rows_per_strip = 0;       // csr_vector: M * P * (block / threads_per_row)
  std::int64_t sample_strips = 1;        // csr_vector: strips per sample (rows = strips * strip)
  FormatParams params{};                 // format_bytes: the parameters of the candidate timed
  // format_bytes: a format that offers no candidate on random columns (DIA: as many diagonals
  // as rows) but does on bands is fitted on banded samples alone.
  bool bands_only = false;
  // Each sample is timed with the format's own features computed on it (FormatRules::
  // own_features), as the tuner computes them: a format that offers nothing on the shape
  // features alone (DIA without its diagonal count, BRO without its stream sizes). Every
  // bands-only record is one.
  bool own_features = false;
  // format_bytes: the random end of the record is the renumbered band (SampleShape::
  // renumbered_band), not random columns; its in-L2 grid too.
  bool renumbered_bands = false;
  std::uint32_t entries_per_thread = 0;  // cuda_coo: E of the launch (grid = nnz / (block E))
  // cache_resident: the stage of the record this variant corrects (csr_vector, coo or
  // format_bytes), whose launch it repeats.
  CalibrationStage base_stage = CalibrationStage::bytes;
  std::vector<SampleShape> samples;
};

struct CalibrationPlan {
  Precision precision = Precision::fp64;
  std::int64_t max_sample_nnz = 0;  // the resolved CalibrationOptions::max_sample_nnz
  std::vector<PlannedVariant> variants;
  // Non-zeros generated on the host (each distinct shape of a stage once) and built into a
  // format on the device (once per variant and sample): the two costs that dominate the run.
  std::int64_t generated_nnz(CalibrationStage stage) const;
  std::int64_t built_nnz(CalibrationStage stage) const;
  std::size_t sample_count(CalibrationStage stage) const;
};

// Registers of a compiled kernel; compiled_kernel_resources by default, a fake in tests.
using KernelResourcesFn = std::function<std::optional<KernelResources>(
    CompiledKernel kernel, Precision precision, int threads_per_row, int threads_per_block)>;

// Registers assumed for a kernel whose count cannot be read (cuda_csr_scalar, whose kernel is
// not in a header; or no GPU): at 32 registers per thread a block of 2048 / P threads is limited
// by threads, not registers, on every GPU from CC 7.0 to 9.0 (65536 registers, 2048 threads per
// SM), so P is right for any kernel using 32 or fewer. SpMV kernels are that small.
inline constexpr int kAssumedRegistersPerThread = 32;

}  // namespace spmvd
