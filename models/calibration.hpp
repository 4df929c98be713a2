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
//               time against the bytes models/families/bytes/bytes_model.hpp says the multiply
//               moves.
//   format_bytes  the same line per format without a dedicated model (kFormatBytesFormats:
//               cuSPARSE CSR, SELL, COO, BSR, cuda_sell; cpu_csr on the CPU), per distinct
//               parameters of its first candidates (kFormatBytesVariants), on two sizes
//               (max_sample_nnz / 4 and max_sample_nnz), each random and banded (BSR: of dense
//               blocks of its block size), then the format's critical-path step twice (a
//               kInL2LongRowLength row in a sample that stays in L2, a kLongRowLength row in
//               the largest sample), the latency stage's tiny sample, and for BSR the largest
//               size at kBsrBlockRowLengths: BytesRecord::formats.
//   cache_resident  last: every csr_vector, coo and format_bytes variant again on a grid of
//               random samples inside L2 (CalibrationOptions::cache_resident_rows x
//               cache_resident_row_lengths), measured / predicted by the finished set, and
//               the banded twin of each (T_banded / T_random on the same grid):
//               ModelSet::cache_resident (models/cache_resident.hpp).
// After the stages, the finishing fits (calibration_finishing_fits): the cpu_gpu record (paper
// 003 Eqs. 6-7, models/families/cpu_gpu/cpu_gpu_fit.hpp): the GPU side from the ell stage's
// samples (ms against rows * width), the CPU side from cpu_coo at doubling non-zero counts
// (the coo stage on the CPU device; beside a GPU, 4 small samples on make_cpu_device(), not in
// the plan); the composed formats' launch floors (those whose parts share one launch, on the
// latency stage's tiny sample) and host build rates (models/calibration/composed_formats_fit.hpp).
// Paper 000's blocked-ELL time is not calibrated: see run_calibration_plan.
// x locality (models/locality.hpp): csr_vector (row lengths kBandedCsrRowLengths), ell (widths
// kBandedEllWidths at every rows of its grid), coo (the largest size) and format_bytes also
// time a banded twin of some random samples (banded_row_length_sample); each banded / random
// time ratio becomes the record's banded_ratio (ELL: a grid over width x rows,
// banded_ratio_vs_width_rows), and the fits use the random samples only.
//
// Layout (one job per file): this header and calibration.cpp are the driver (plan, sample
// cache across stages, progress); models/calibration/calibration_plan.hpp the plan as data;
// models/calibration/stage.hpp the stage interface and calibration_stages(), the table the
// driver iterates; each stage's plan and fit beside what it calibrates
// (models/families/{csr_vector,ell,coo,bytes}/*_calibration.hpp,
// models/calibration/{latency,cache_resident}_stage.hpp); models/calibration/sample_timing.hpp
// the timing of one sample; models/sample_generators.hpp the sample matrices.
//
// Thread safety: calibration issues work on `device` and expects nothing else to use it.

#include <functional>
#include <string>

#include "core/device_info.hpp"
#include "core/precision.hpp"
#include "kernels/device.hpp"
#include "kernels/format_registry.hpp"
#include "models/calibration/calibration_plan.hpp"
#include "models/compiled_kernel_resources.hpp"
#include "models/families/bytes/bytes_calibration.hpp"
#include "models/families/csr_vector/csr_vector_calibration.hpp"
#include "models/families/ell/ell_calibration.hpp"
#include "models/model_set.hpp"
#include "models/sample_generators.hpp"

namespace spmvd {

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

// What calibrate_precision would run on `device`: pure, O(variants * samples).
// Throws Error(invalid_argument) on empty option lists or non-positive sizes.
CalibrationPlan plan_calibration(
    const FormatRegistry& registry, const DeviceInfo& device, Precision precision,
    const CalibrationOptions& options,
    const KernelResourcesFn& kernel_resources = compiled_kernel_resources);

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
