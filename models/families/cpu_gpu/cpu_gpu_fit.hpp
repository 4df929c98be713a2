#pragma once
// The cpu_gpu family's record (paper 003 Eqs. 6-7, cpu_gpu_record.hpp), fitted after the stages:
// the CPU side from cpu_coo, the GPU side from the ell stage's fastest launch.

#include <optional>
#include <span>
#include <vector>

#include "core/csr_matrix.hpp"
#include "kernels/device.hpp"
#include "kernels/format_registry.hpp"
#include "models/calibration/calibration_plan.hpp"
#include "models/calibration/host_copy_timing.hpp"
#include "models/calibration/stage.hpp"
#include "models/families/coo/coo_model.hpp"
#include "models/families/cpu_gpu/cpu_gpu_record.hpp"

namespace spmvd {

// Paper 003 Sec. 5.1 from measurements. Eq. 6 (CPU side): cpu_coo's time per non-zero on all
// nc hardware threads of the host, a line ms = a * nnz + b; with TC = 2 NNZ / (fc * nc) on
// those nc threads, fc = 2 / (a * nc) per core (Eq. 6 itself then runs the COO part on nc - 1,
// one core driving the GPU). On the CPU device the coo stage has timed exactly this (its only
// record is cpu_coo), and cpu_banded_ratio is that record's banded ratio at its largest sample;
// beside a GPU the host is a second device, timed here and not planned, since every planned
// variant runs on `device`: random samples over an x as wide as a real matrix's and their
// banded twins (fit_host_coo_rates; the shapes and why in cpu_gpu_fit.cpp). Eq. 7 (GPU side):
// ell_ms_per_entry, the slope of
// the fastest ELL launch's ms against rows * width; Eq. 7 uses only the product C * F, and
// DeviceInfo counts SMs, not SPs, so C = sm_count and F is per SM: F = 1 / (slope * C). The
// paper's equations have no constant term, so both intercepts are dropped (the launch floor is
// ModelSet::launch_floor_ms). Without ELL samples (the CPU device) C and F stay 0, which
// gpu_ell_time_ms refuses. Beside a GPU, the host part's copies (issue 15): pinned copies timed
// both ways (time_pinned_copies, 4 KiB to 64 MiB) and fitted by fit_host_device_copies; on the
// CPU device they stay 0. nullopt: no cpu_coo, or its slope is not positive (no rate).
std::optional<CpuGpuTimeCoefficients> fit_cpu_gpu(const FormatRegistry& registry, Device& device,
                                                  const CalibrationPlan& plan,
                                                  const CalibrationOptions& o,
                                                  const std::vector<CooCalibration>& coo,
                                                  std::optional<double> ell_ms_per_entry);

// The host's rates from its cpu_coo samples, (nnz, ms) each: random_ms_per_nnz the slope of a
// line through the random-column samples (fc's a), banded_ratio (rho, models/locality.hpp) the
// slope through their banded twins divided by it — the time a band's non-zero takes against a
// random one's, the fixed costs (intercepts) left out as Eq. 6 leaves them. nullopt when either
// set has fewer than 2 distinct sizes or a slope is not positive (no rate).
struct HostCooRates {
  double random_ms_per_nnz = 0.0;
  double banded_ratio = 0.0;
  double ms_per_row = 0.0;  // a touched row's own cost (with_row_cost); 0: folded into the above
  friend bool operator==(const HostCooRates&, const HostCooRates&) = default;
};
std::optional<HostCooRates> fit_host_coo_rates(std::span<const SamplePoint> random,
                                               std::span<const SamplePoint> banded);

// Separates a row's own cost (its offsets, its partial sum's write) from its non-zeros': rates
// fitted on rows of row_length entries hold s = a + b / row_length per non-zero, samples of one
// entry a row (one_entry_slope, ms per non-zero = per row) hold a + b; so b = (s1 - s) L / (L - 1),
// a = s - b / L, and the banded twins' s_band = rho' a + b / L give the non-zeros' own rho'.
// Returns `rates` unchanged where the single-entry rows are not dearer (b <= 0), L < 2, or the
// separation leaves no positive rate.
HostCooRates with_row_cost(const HostCooRates& rates, double one_entry_slope,
                           std::int64_t row_length);

// The splits that time the host path (cpu_gpu_fit.cpp, time_host_path), each kHostPathSampleRows
// rows of kHostPathSampleWidth random columns, split at K = kHostPathSampleWidth, its row 0
// longer: one_entry's by one entry (the round trip: a host part of one entry), one_chunk's by
// kHostChunkMinEntries and two_chunks' by twice that (the wake-up: host parts of one chunk and
// of two of the same size), the latter two over 4 x kHostChunkMinEntries columns.
inline constexpr std::int64_t kHostPathSampleRows = 4096;
inline constexpr std::int64_t kHostPathSampleWidth = 8;
struct HostPathSamples {
  CsrMatrix<double> one_entry, one_chunk, two_chunks;
};
HostPathSamples host_path_samples(std::uint64_t seed);

// fit_cpu_gpu on the coo record and the ell stage's rate of the finished stages: puts the
// cpu_gpu record into the set where there is one (calibration_finishing_fits).
void fit_cpu_gpu_record(const FinishingFitInput& in);

// ms = latency + bytes / bandwidth fitted per direction (least squares, relative errors) on
// `samples` (>= 2 distinct sizes); sets c.host_device_bytes_per_ms to the slower direction's
// bandwidth and c.host_device_copy_latency_ms to the larger intercept (clamped at 0): a
// multiply's host part copies both ways (x down, y rows up), and one figure for both keeps the
// prediction on the safe side. Leaves both 0 when there are too few samples or a slope is not
// positive.
void fit_host_device_copies(std::span<const HostCopySample> samples, CpuGpuTimeCoefficients& c);

}  // namespace spmvd
