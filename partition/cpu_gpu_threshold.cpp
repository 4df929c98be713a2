#include "partition/cpu_gpu_threshold.hpp"

#include <algorithm>
#include <string>

#include "core/error.hpp"

namespace spmvd {
namespace {

// Row indices of the sparse y part are 32-bit, as column indices are (core/csr_matrix.hpp).
constexpr std::int64_t kRowIndexBytes = 4;

void check_costs(const CpuGpuSplitCosts& costs) {
  if (!costs.gpu_part_ms || !costs.cpu_part_ms) {
    throw_invalid("cpu_gpu_split_time: both the GPU and the CPU time callables must be set");
  }
  if (!(costs.host_device_bytes_per_ms > 0.0)) {
    throw_invalid("cpu_gpu_split_time: host-device bandwidth " +
                  std::to_string(costs.host_device_bytes_per_ms) + " bytes/ms is not positive");
  }
  if (costs.value_bytes != 4 && costs.value_bytes != 8) {
    throw_invalid("cpu_gpu_split_time: value_bytes " + std::to_string(costs.value_bytes) +
                  " is neither 4 nor 8");
  }
}

double copy_ms(std::int64_t bytes, const CpuGpuSplitCosts& costs) {
  if (bytes == 0) return 0.0;
  return costs.copy_latency_ms + static_cast<double>(bytes) / costs.host_device_bytes_per_ms;
}

CpuGpuSplitTime split_time(const MatrixFeatures& features, std::int64_t ell_width,
                           const CpuGpuSplitCosts& costs) {
  CpuGpuSplitTime t;
  t.ell_width = ell_width;
  t.split = ell_coo_split(features, ell_width);
  const std::int64_t x_bytes = t.split.ell_nnz > 0 ? features.cols * costs.value_bytes : 0;
  const std::int64_t y_part_bytes = t.split.coo_rows * (costs.value_bytes + kRowIndexBytes);
  t.gpu_ms = copy_ms(x_bytes, costs) + costs.gpu_part_ms(t.split);
  t.cpu_ms = costs.cpu_part_ms(t.split) + copy_ms(y_part_bytes, costs);
  t.total_ms = std::max(t.gpu_ms, t.cpu_ms);  // Eq. 8
  return t;
}

}  // namespace

CpuGpuSplitTime cpu_gpu_split_time(const MatrixFeatures& features, std::int64_t ell_width,
                                   const CpuGpuSplitCosts& costs) {
  check_costs(costs);
  return split_time(features, ell_width, costs);
}

CpuGpuSplitTime balanced_cpu_gpu_threshold(const MatrixFeatures& features,
                                           const CpuGpuSplitCosts& costs) {
  check_costs(costs);
  if (features.row_length_max <= 0) return split_time(features, 0, costs);
  // The first K in [1, longest row] where the GPU side is no faster than the CPU side; past the
  // longest row nothing changes, so "none" is the longest row itself.
  std::int64_t lo = 1, hi = features.row_length_max;
  while (lo < hi) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    const CpuGpuSplitTime t = split_time(features, mid, costs);
    if (t.gpu_ms >= t.cpu_ms) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  const CpuGpuSplitTime at_crossing = split_time(features, lo, costs);
  if (lo == 1) return at_crossing;
  // Algorithm 3 lines 15-19: K - 1 only where its maximum (the CPU side) is strictly smaller.
  const CpuGpuSplitTime before = split_time(features, lo - 1, costs);
  return before.total_ms < at_crossing.total_ms ? before : at_crossing;
}

CpuGpuSplitCosts paper_003_split_costs(const CpuGpuTimeCoefficients& coefficients,
                                       double x_randomness, double host_device_bytes_per_ms,
                                       std::int64_t value_bytes) {
  return CpuGpuSplitCosts{
      .gpu_part_ms =
          [coefficients](const EllCooSplit& s) {
            return gpu_ell_time_ms(s.ell_nnz, coefficients);  // Eq. 7
          },
      .cpu_part_ms =
          [coefficients, x_randomness](const EllCooSplit& s) {
            return cpu_coo_time_ms(s.coo_nnz, x_randomness, coefficients);  // Eq. 6
          },
      .host_device_bytes_per_ms = host_device_bytes_per_ms,
      .copy_latency_ms = 0.0,
      .value_bytes = value_bytes,
  };
}

}  // namespace spmvd
