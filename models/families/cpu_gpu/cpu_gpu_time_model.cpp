#include "models/families/cpu_gpu/cpu_gpu_time_model.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "models/df_split.hpp"
#include "models/locality.hpp"

namespace spmvd {

double host_x_width_ratio(const CpuGpuTimeCoefficients& c, double x_bytes) noexcept {
  if (c.x_width_ratio.empty() || !(x_bytes > 0.0)) return 1.0;
  return interpolate_in_log_x(c.x_width_ratio, x_bytes);
}

double host_threads(std::int64_t tasks, const CpuGpuTimeCoefficients& c) {
  if (c.cpu_cores < 2) throw_invalid("host_threads: needs >= 2 CPU cores (one drives the GPU)");
  const std::int64_t spare = c.cpu_cores - 1;
  return static_cast<double>(tasks > 0 ? std::min(tasks, spare) : spare);
}

double cpu_coo_time_ms(std::int64_t cpu_nnz, double x_randomness,
                       const CpuGpuTimeCoefficients& c, double x_width_ratio,
                       std::int64_t tasks) {
  if (c.cpu_cores < 2 || c.cpu_operations_per_ms <= 0.0) {
    throw_invalid("cpu_coo_time_ms: needs >= 2 CPU cores (one drives the GPU) and a positive fc");
  }
  // Paper 003 Eq. 6: a multiply and an add per non-zero on nc - 1 cores, at the rate of the
  // random-column samples; a band's gathers reuse the cache lines of neighbouring rows
  // (rho + (1 - rho) w), a random gather from a narrower x costs x_width_ratio of fc's: the
  // factor is rho + (r - rho) w, r held at rho or above (no x makes a gather cheaper than the
  // band's reuse).
  const double rho = locality_factor(c.cpu_banded_ratio, 0.0);  // rho as locality.hpp clamps it
  const double r = std::max(x_width_ratio, std::min(rho, 1.0));
  const double factor = rho + (r - rho) * std::clamp(x_randomness, 0.0, 1.0);
  return 2.0 * static_cast<double>(cpu_nnz) / c.cpu_operations_per_ms /
         host_threads(tasks, c) * factor;
}

double host_rows_time_ms(std::int64_t touched_rows, const CpuGpuTimeCoefficients& c,
                         std::int64_t tasks) {
  const double threads = host_threads(tasks, c);
  return static_cast<double>(touched_rows) * c.cpu_ms_per_row *
         static_cast<double>(c.cpu_cores) / threads;
}

double gpu_ell_time_ms(std::int64_t gpu_nnz, const CpuGpuTimeCoefficients& c) {
  if (c.gpu_streaming_processors <= 0 || c.gpu_operations_per_ms_per_sp <= 0.0) {
    throw_invalid("gpu_ell_time_ms: C and F must be positive");
  }
  // Paper 003 Eq. 7.
  return static_cast<double>(gpu_nnz) /
         (static_cast<double>(c.gpu_streaming_processors) * c.gpu_operations_per_ms_per_sp);
}

double host_copies_ms(std::uint64_t bytes, int copies, const CpuGpuTimeCoefficients& c) {
  if (bytes == 0) return 0.0;
  if (!(c.host_device_bytes_per_ms > 0.0)) {
    throw_invalid("host_copies_ms: no host-device copy bandwidth is calibrated");
  }
  return static_cast<double>(copies) * std::max(0.0, c.host_device_copy_latency_ms) +
         static_cast<double>(bytes) / c.host_device_bytes_per_ms;
}

double host_round_trip_ms_of(double split_ms, std::int64_t host_nnz,
                             std::int64_t host_tasks, std::uint64_t copy_bytes, int copies,
                             const CpuGpuTimeCoefficients& c, double x_width_ratio) {
  // The sample's host part is one entry in each of host_nnz rows.
  const double host_ms = cpu_coo_time_ms(host_nnz, 1.0, c, x_width_ratio, host_tasks) +
                         host_rows_time_ms(host_nnz, c, host_tasks) +
                         host_copies_ms(copy_bytes, copies, c);
  return std::max(0.0, split_ms - host_ms);
}

CpuGpuTime cpu_gpu_time_ms(const MatrixFeatures& features, std::int64_t ell_width,
                           const CpuGpuTimeCoefficients& c) {
  const EllCooSplit split = ell_coo_split(features, ell_width);
  CpuGpuTime t;
  t.cpu_ms = cpu_coo_time_ms(split.coo_nnz, x_gather_randomness(features), c) +
             host_rows_time_ms(split.coo_rows, c);
  t.gpu_ms = gpu_ell_time_ms(split.ell_nnz, c);
  t.total_ms = std::max(t.cpu_ms, t.gpu_ms);  // Eq. 8: the two run concurrently
  return t;
}

}  // namespace spmvd
