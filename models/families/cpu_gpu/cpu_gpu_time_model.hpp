#pragma once
// The CPU-GPU split time model of paper 003 (Sec. 5.1): an ELL part of width K on the GPU and
// the COO remainder on the CPU, run concurrently,
//   TC = 2 NNZ(CPU) / fc / (nc - 1)   (Eq. 6; one core drives the GPU),
//   TG = NNZ(GPU) / (C F)             (Eq. 7),
//   T  = max(TC, TG)                  (Eq. 8).
// Beside a GPU the host part also pays its copies every multiply (issue 15; Sec. 5.1 leaves them
// out): x to the host and its rows of y back, at the measured pinned copy bandwidth, and the
// fixed cost of the host path's round trip (host_round_trip_ms): on the H100 box the splits
// whose K balances the two sides measured 1.4-2x their prediction without it, a fixed
// 0.3-0.5 ms a multiply whatever the host part's size (2026-11-24, model version 20).
// fc is one rate, but the host's x gathers are not: Eq. 6 is scaled by the x-locality factor
// of models/locality.hpp, rho + (1 - rho) w, with rho = cpu_banded_ratio (the host's banded
// samples against their random twins) and w the matrix's x_gather_randomness. On the H100 box's
// 16-core host a single fc put the host part of banded, stencil and FEM matrices at 2x their
// measured time and that of random or renumbered ones at 0.6-0.9x (2026-11-24, ell_width 1).
// Nor is fc one rate for every x: its samples gather from an x beyond the host's caches, and a
// random gather from an x that the caches hold is cheaper (x_width_ratio): on the H100 box the
// host parts of ego-Twitter_u, cit-HepPh and cage11 (x of 0.1-0.3 MB) measured 0.4-0.65 of
// their prediction (2026-12-06, model version 34).

#include <cstdint>
#include <string_view>
#include <tuple>
#include <vector>

#include "core/field_set.hpp"
#include "core/matrix_features.hpp"
#include "models/fitting.hpp"

namespace spmvd {

// The cpu_gpu family's record in a ModelSet (cpu_gpu_record.hpp; fitted by cpu_gpu_fit.hpp):
// what predicts the host part of a composed format (models/part_time_predictor.hpp).
struct CpuGpuTimeCoefficients {
  static constexpr std::string_view kFamily = "cpu_gpu";
  int cpu_cores = 0;                          // nc
  double cpu_operations_per_ms = 0.0;         // fc: per core
  int gpu_streaming_processors = 0;           // C
  double gpu_operations_per_ms_per_sp = 0.0;  // F
  // Pinned host<->device copies (models/calibration/host_copy_timing.hpp): the slower of the
  // two directions' fitted bandwidths, and the larger of their fitted per-copy latencies. 0 on
  // the CPU device (nothing crosses a bus) or where the copies could not be measured.
  double host_device_bytes_per_ms = 0.0;
  double host_device_copy_latency_ms = 0.0;
  // rho of the host's cpu_coo: T_banded / T_random of the calibration's twin samples, the
  // ratio of the two fitted slopes (cpu_gpu_fit.hpp). fc is the random samples' rate; a
  // matrix of x randomness w runs at fc / (rho + (1 - rho) w). 1: no locality term.
  double cpu_banded_ratio = 1.0;
  // The fixed cost of a host part's path per multiply beyond Eq. 6 and its copies' bytes and
  // latencies: the fork from the device's stream, the CUDA driver thread's dispatch of the host
  // function, the join back and the add kernel after it. Timed as a split of a small sample
  // whose host part is a single entry, less that entry and its copies (cpu_gpu_fit.cpp,
  // host_round_trip_ms_of), in both precisions in turns. 0 on the CPU device.
  double host_round_trip_ms = 0.0;
  // What a host part of more than one task pays beyond one of a single task, its tasks side by
  // side: oneTBB's sleeping workers woken (a single task runs on the CUDA host-function thread
  // itself). Timed as the difference between two splits whose host parts are one row of 2 x
  // 4096 and of 4096 entries, two chunks and one (cpu_gpu_fit.cpp, time_host_path). 0 on the
  // CPU device or where not timed.
  double host_wake_ms = 0.0;
  // A touched row's own cost on the host (its offsets, its partial sum written), ms on all nc
  // hardware threads, beside fc's per non-zero: timed rows of 8 and of 1 entry
  // (cpu_gpu_fit.cpp, with_row_cost). On the H100 box a single fc put the host parts of one or
  // two entries a row (the splits at a balanced K) at 0.5-0.6 of their time and those of 16 a
  // row (K = 1) at 1.6-2x (2026-11-24, model version 20's first calibration). 0: folded into fc.
  double cpu_ms_per_row = 0.0;
  // {x bytes, a random non-zero's time at that x / at the widest}: the fitted per-non-zero
  // slopes of random samples over x of several widths (cpu_gpu_fit.cpp), the widest (fc's
  // samples) last at 1. Empty on the CPU device: fc for every x.
  std::vector<SamplePoint> x_width_ratio;
  static constexpr auto kFields = std::tuple{
      declare_field("cpu_cores", &CpuGpuTimeCoefficients::cpu_cores),
      declare_field("cpu_operations_per_ms", &CpuGpuTimeCoefficients::cpu_operations_per_ms),
      declare_field("gpu_streaming_processors", &CpuGpuTimeCoefficients::gpu_streaming_processors),
      declare_field("gpu_operations_per_ms_per_sp",
                    &CpuGpuTimeCoefficients::gpu_operations_per_ms_per_sp),
      declare_field("host_device_bytes_per_ms", &CpuGpuTimeCoefficients::host_device_bytes_per_ms),
      declare_field("host_device_copy_latency_ms",
                    &CpuGpuTimeCoefficients::host_device_copy_latency_ms),
      declare_field("cpu_banded_ratio", &CpuGpuTimeCoefficients::cpu_banded_ratio),
      declare_field("host_round_trip_ms", &CpuGpuTimeCoefficients::host_round_trip_ms),
      declare_field("host_wake_ms", &CpuGpuTimeCoefficients::host_wake_ms),
      declare_field("cpu_ms_per_row", &CpuGpuTimeCoefficients::cpu_ms_per_row),
      declare_field("x_width_ratio", &CpuGpuTimeCoefficients::x_width_ratio)};
  friend bool operator==(const CpuGpuTimeCoefficients&, const CpuGpuTimeCoefficients&) = default;
};

struct CpuGpuTime {
  double cpu_ms = 0.0;    // TC
  double gpu_ms = 0.0;    // TG
  double total_ms = 0.0;  // T
  friend bool operator==(const CpuGpuTime&, const CpuGpuTime&) = default;
};

// A random non-zero's time on the host at an x of x_bytes against fc's (c.x_width_ratio, linear
// in log x bytes between the measured widths, the end values beyond them); 1 where none was
// measured.
double host_x_width_ratio(const CpuGpuTimeCoefficients& c, double x_bytes) noexcept;

// The threads a host part of `tasks` parallel tasks runs on: nc - 1 (Eq. 6: one core drives the
// GPU), or fewer where the part has fewer tasks (FormatPart::host_tasks; 0: nc - 1). Throws
// Error(invalid_argument) when nc < 2.
double host_threads(std::int64_t tasks, const CpuGpuTimeCoefficients& c);
// Eq. 6 times the host's locality factor: cpu_nnz non-zeros gathering x with randomness
// x_randomness in [0, 1] (x_gather_randomness of the matrix, models/locality.hpp; 1: random
// columns; 0: a band, fc / cpu_banded_ratio), a random gather at x_width_ratio of fc's time
// (host_x_width_ratio; 1: fc itself), never below a band's; on host_threads(tasks) cores.
// Throws Error(invalid_argument) when nc < 2 or fc <= 0.
double cpu_coo_time_ms(std::int64_t cpu_nnz, double x_randomness,
                       const CpuGpuTimeCoefficients& c, double x_width_ratio = 1.0,
                       std::int64_t tasks = 0);
// The touched rows' own cost of a host part: rows x cpu_ms_per_row (a time on all nc threads),
// moved to host_threads(tasks) threads as Eq. 6 is. Throws Error(invalid_argument) when nc < 2.
double host_rows_time_ms(std::int64_t touched_rows, const CpuGpuTimeCoefficients& c,
                         std::int64_t tasks = 0);
// Eq. 7. Throws Error(invalid_argument) when C or F is not positive.
double gpu_ell_time_ms(std::int64_t gpu_nnz, const CpuGpuTimeCoefficients& c);
// The copies of a host part: `copies` transfers moving `bytes` in all, at the measured
// bandwidth plus a latency each. 0 for no bytes. Throws Error(invalid_argument) when bytes > 0
// and no bandwidth is calibrated (host_device_bytes_per_ms <= 0).
double host_copies_ms(std::uint64_t bytes, int copies, const CpuGpuTimeCoefficients& c);
// The host path's fixed cost (CpuGpuTimeCoefficients::host_round_trip_ms) from a split's
// measured time on a sample whose host path is its critical path: split_ms less Eq. 6 and the
// rows' own cost for the host part's host_nnz random non-zeros, one a row, in host_tasks tasks,
// at x_width_ratio (the sample's x), and its `copies` copies moving copy_bytes (c's bandwidth
// and latency); at least 0. Its ELL kernel is not subtracted: it runs beside the host path, and
// a split is predicted as the slower of its GPU and host parts (composed_time_ms), so the
// round trip holds what follows the host path (the add kernel) and the sample's own prediction
// is its measured time. Throws as cpu_coo_time_ms and host_copies_ms do.
double host_round_trip_ms_of(double split_ms, std::int64_t host_nnz,
                             std::int64_t host_tasks, std::uint64_t copy_bytes, int copies,
                             const CpuGpuTimeCoefficients& c, double x_width_ratio = 1.0);

// Eqs. 4-8 for threshold K, with the split taken from the DF (models/df_split.hpp); the COO
// part at the whole matrix's x_gather_randomness (a part gathers from the matrix's x).
CpuGpuTime cpu_gpu_time_ms(const MatrixFeatures& features, std::int64_t ell_width,
                           const CpuGpuTimeCoefficients& c);

}  // namespace spmvd
