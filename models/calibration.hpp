#pragma once
// Calibration of the performance models on one device and precision (paper 004 Sec. 4.3): the
// paper's sample matrices are generated, built with the registry's own formats, timed with
// Device::time_ms, and handed to the fitters of models/fitting.hpp.
//
// Stages, in this order (each runs only where the registry has the format for this kind of
// device):
//   latency     per threads_per_row (block 256): a tiny sample (the launch floor of every
//               prediction, ModelSet::launch_floor_ms, and the csr_vector fixed cost) and a
//               sample with one row of kLongRowLength non-zeros against the same matrix without
//               it (the critical-path step time, CsrVectorCalibration::long_row_step_ms).
//   csr_vector  Fig. 3 and 4: for every threads_per_row t (1 = cuda_csr_scalar, 2-32 =
//               cuda_csr_vector) and block size, samples of S strips of M * P * (block / t) rows
//               (Sec. 4.3.1, with P from models/occupancy.hpp), every row of one length c; a
//               sample of short rows gets more rows (multiples of 65536), past 1.5 L2s of
//               footprint, so that it streams from DRAM, and is scaled back to S strips for the
//               fits.
//   ell         Fig. 5: cuda_ell on a grid of widths x rows (powers of 2 and 4), per block size.
//   coo         Fig. 6: cuda_coo (or cpu_coo on the CPU) at doubling non-zero counts, per
//               entries per thread E and block size.
//   bytes       the fallback model: cuSPARSE CSR ALG1 (or cpu_csr on the CPU) at doubling sizes,
//               time against the bytes models/families/bytes/bytes_model.hpp says the multiply moves.
//   format_bytes  the same line per format without a dedicated model (kFormatBytesFormats:
//               cuSPARSE CSR, SELL, COO, BSR, cuda_sell; cpu_csr on the CPU), per distinct
//               parameters of its first candidates (kFormatBytesVariants), on two sizes
//               (max_sample_nnz / 4 and max_sample_nnz), each random and banded (BSR: of dense
//               blocks of its block size), then the format's critical-path step twice (a
//               kInL2LongRowLength row in a sample that stays in L2, a kLongRowLength row in
//               the largest sample), the latency stage's tiny sample, and for BSR the largest
//               size at kBsrBlockRowLengths: ModelSet::format_bytes.
//   cache_resident  last: every csr_vector, coo and format_bytes variant again on a grid of
//               random samples inside L2 (CalibrationOptions::cache_resident_rows x
//               cache_resident_row_lengths), measured / predicted by the finished set, and
//               the banded twin of each (T_banded / T_random on the same grid):
//               ModelSet::cache_resident (models/cache_resident.hpp).
// After the stages, ModelSet::cpu_gpu (paper 003 Eqs. 6-7): the GPU side from the ell stage's
// samples (ms against rows * width), the CPU side from cpu_coo at doubling non-zero counts
// (the coo stage on the CPU device; beside a GPU, 4 small samples on make_cpu_device(), not in
// the plan). ModelSet::blocked_ell (paper 000) stays unset: see run_calibration_plan.
// x locality (models/locality.hpp): csr_vector (row lengths kBandedCsrRowLengths), ell (widths
// kBandedEllWidths at every rows of its grid), coo (the largest size) and format_bytes also
// time a banded twin of some random samples (banded_row_length_sample); each banded / random
// time ratio becomes the record's banded_ratio (ELL: a grid over width x rows,
// banded_ratio_vs_width_rows), and the fits use the random samples only.
//
// Thread safety: calibration issues work on `device` and expects nothing else to use it.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/csr_matrix.hpp"
#include "core/device_info.hpp"
#include "core/format_id.hpp"
#include "core/precision.hpp"
#include "kernels/device.hpp"
#include "kernels/format_registry.hpp"
#include "models/compiled_kernel_resources.hpp"
#include "models/model_set.hpp"
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
  // cuda_coo: one variant per entries per thread E (which sets its time, models/families/coo/coo_model.hpp)
  // and block size.
  std::vector<std::uint32_t> coo_block_sizes{256};
  std::vector<std::uint32_t> coo_entries_per_thread{2, 8, 32};  // cuda_coo's kCooEntriesPerThread
  // Row length of the COO and bytes samples (the COO model's row writes: models/families/coo/row_writes.hpp).
  std::int64_t coo_row_length = kCooSampleRowLength;
  int size_steps = 8;  // COO and bytes: max_sample_nnz / 2^(size_steps - 1) ... max, doubling
  // The cache_resident stage's grid of random samples, rows x row length: at most 2M
  // non-zeros (25 MB of CSR in fp64, within the L2 of an H100/H200), from a few thousand rows
  // (one partial wave, latency chains) to 65536 (the GPU filled).
  std::vector<std::int64_t> cache_resident_rows{4096, 16384, 65536};
  std::vector<std::int64_t> cache_resident_row_lengths{2, 4, 8, 16, 32};
  std::uint64_t seed = 20110101;
};

struct CalibrationProgress {
  std::string stage;      // "csr_vector", "ell", ... (to_string(CalibrationStage))
  std::size_t done = 0;   // samples timed in this stage so far
  std::size_t total = 0;  // samples this stage times
  // The sample just timed ("csr_vector cuda_csr_vector t=8 block=256 rows=270336 c=24: 0.02130
  // ms"), or "fitted" on the stage's last call, made once its records are fitted.
  std::string detail;
  double stage_elapsed_s = 0.0;  // wall clock since the stage began (generation, builds, fits)
};
using CalibrationProgressFn = std::function<void(const CalibrationProgress&)>;

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

// BSR's format_bytes record also times its largest size at these row lengths (non-zeros, of
// dense blocks of its block size b: row_length / b blocks per block row), beside the base row
// length's 8. cuSPARSE BSR streams more bytes per ms the more blocks a block row holds: on an
// H100 4 x 4 blocks at 2 per block row moved 1.1 TB/s, at 25 (bcsstk16-x64) 2.0.
inline constexpr std::int64_t kBsrBlockRowLengths[] = {32, 128};
// A sample's measured time (y) over what a bytes fit predicts for the bytes it moved (x): 1 on
// the line, 0 where the fit predicts nothing positive. BSR's block-row ratio is this at each
// kBsrBlockRowLengths sample over this at the base sample, so that it keeps what blocks per
// block row change beyond the bytes (fewer block rows also mean less y and fewer row pointers,
// which the prediction counts already).
double time_over_bytes_fit(const SamplePoint& bytes_and_ms, const LinearFit& fit) noexcept;
// A CSR-vector banded ratio net of the launch's fixed cost F (CsrVectorCalibration::fixed_ms):
// (T_banded - F) / (T_random - F), since the model charges F once and scales only the per-row
// shares by the locality factor; the plain ratio where T_random <= F (nothing to net).
double banded_ratio_net_of_fixed_cost(double banded_ms, double random_ms, double fixed_ms) noexcept;

// Row lengths whose csr_vector samples get a banded twin, ELL widths whose samples do (at
// every rows): around the 5-30 entries per row of stencil and FEM matrices, and a short and a
// long end.
inline constexpr std::int64_t kBandedCsrRowLengths[] = {2, 8, 32};
inline constexpr std::int64_t kBandedEllWidths[] = {2, 8, 32};

// Distinct parameter sets per format that the format_bytes stage calibrates: the first ones
// of the format's candidates (cuSPARSE CSR ALG1 and ALG2, COO ALG1 and ALG2, SELL slice heights
// 32 and 64, BSR block sizes 2 and 4, cuda_sell's first two sort windows).
inline constexpr std::size_t kFormatBytesVariants = 2;

// Formats the format_bytes stage fits: those whose model family is the bytes model.
bool has_format_bytes_stage(const FormatRules& rules) noexcept;

// One sample matrix: rows x rows, every row holding row_length non-zeros; with long_row > 0,
// row 0 instead holds long_row columns spread over all of them (with_long_row); with banded,
// the columns of every row
// are contiguous around the diagonal (banded_row_length_sample); with block_dim b > 1, the
// non-zeros come in dense b x b blocks (blocked_sample of the pattern of rows / b rows of
// row_length / b entries; rows and row_length are multiples of b).
struct SampleShape {
  std::int64_t rows = 0;
  std::int64_t row_length = 0;
  std::int64_t long_row = 0;
  bool banded = false;
  std::int64_t block_dim = 1;
  std::int64_t nnz() const noexcept {
    return rows * row_length + (long_row > 0 ? long_row - row_length : 0);
  }
  friend auto operator<=>(const SampleShape&, const SampleShape&) = default;
};

// One calibration record to produce: which format is timed with which launch, on which samples.
struct PlannedVariant {
  CalibrationStage stage = CalibrationStage::bytes;
  FormatId format;
  CalibratedKernel kernel;          // block size, registers, lanes per row
  bool registers_measured = false;  // false: registers_per_thread is the documented assumption
  std::int64_t rows_per_strip = 0;  // csr_vector: M * P * (block / threads_per_row)
  std::int64_t sample_strips = 1;   // csr_vector: strips per sample (rows = strips * strip)
  FormatParams params{};            // format_bytes: the parameters of the candidate timed
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

// What calibrate_precision would run on `device`: pure, O(variants * samples).
// Throws Error(invalid_argument) on empty option lists or non-positive sizes.
CalibrationPlan plan_calibration(
    const FormatRegistry& registry, const DeviceInfo& device, Precision precision,
    const CalibrationOptions& options,
    const KernelResourcesFn& kernel_resources = compiled_kernel_resources);

// A rows x rows sample whose every row has row_length non-zeros: one column drawn uniformly
// from each of row_length equal bins of [0, rows) (sorted and distinct by construction, spread
// over all of x like the paper's random columns), values uniform in [-1, 1). Deterministic in
// seed. Throws Error(invalid_argument) unless 1 <= row_length <= rows.
CsrMatrix<double> uniform_row_length_sample(std::int64_t rows, std::int64_t row_length,
                                            std::uint64_t seed);

// The banded twin of uniform_row_length_sample(rows, row_length, seed): row r holds the
// row_length contiguous columns starting at clamp(r - row_length / 2, 0, rows - row_length),
// a band of neighbouring rows sharing nearly all of their x (the local end of
// models/locality.hpp). Values uniform in [-1, 1), deterministic in seed. Throws
// Error(invalid_argument) unless 1 <= row_length <= rows <= 2^31 - 1.
CsrMatrix<double> banded_row_length_sample(std::int64_t rows, std::int64_t row_length,
                                           std::uint64_t seed);

// `base` with row 0 replaced by `length` columns evenly spread over all of base's columns (all
// of them when length == cols), valued as base's first entry: one row whose critical path
// dominates. Throws Error(invalid_argument) unless base has a row and an entry and
// 1 <= length <= base.cols.
CsrMatrix<double> with_long_row(const CsrMatrix<double>& base, std::int64_t length);

// Every entry (r, c, v) of `pattern` as the dense b x b block of rows r*b.. and columns c*b..,
// all of value v: a matrix that a BSR of block size b (or of any divisor of b) stores without
// fill. Throws Error(invalid_argument) unless b >= 1 and the result's rows and columns stay
// within 2^31 - 1.
CsrMatrix<double> blocked_sample(const CsrMatrix<double>& pattern, std::int64_t block_dim);

// The features of such a sample (every row of one length but a long row 0), as
// tuner/feature_extraction would
// compute them, without the dependency on tuner/ — but the group padding, which for rows of
// one length is the distribution itself (and every rule reads it so), and the block counts
// unless count_blocks (a blocked sample: BSR's bytes are exact only with them). Counting
// blocks costs more than the rest: calibration generates ~750 M non-zeros per precision.
MatrixFeatures uniform_sample_features(const CsrMatrix<double>& sample, bool count_blocks = false);

// Runs the plan on `device` and fits every record: the model set of this device and precision.
// on_progress (may be empty) is called after every timed sample and once more per stage after
// its fits. Throws what building or running a sample throws (Error(resource_exhausted) when device
// memory runs out), and Error(internal) naming the variant when its samples cannot be fitted.
ModelSet calibrate_precision(const FormatRegistry& registry, Device& device, Precision precision,
                             const CalibrationOptions& options,
                             const CalibrationProgressFn& on_progress);

// The same for a plan made beforehand (plan_calibration with device.info() and precision).
ModelSet run_calibration_plan(const FormatRegistry& registry, Device& device,
                              const CalibrationPlan& plan, const CalibrationOptions& options,
                              const CalibrationProgressFn& on_progress);

}  // namespace spmvd
