#include "bench/timing_stats.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"

namespace spmvd {

TimingStats summarize_timings(std::vector<double> times_ms) {
  if (times_ms.empty()) throw_invalid("summarize_timings: no timings");
  std::sort(times_ms.begin(), times_ms.end());
  const std::size_t n = times_ms.size();
  TimingStats stats;
  stats.min_ms = times_ms.front();
  stats.median_ms = n % 2 ? times_ms[n / 2] : 0.5 * (times_ms[n / 2 - 1] + times_ms[n / 2]);
  const auto rank = static_cast<std::size_t>(std::ceil(0.9 * static_cast<double>(n)));
  stats.p90_ms = times_ms[std::max<std::size_t>(rank, 1) - 1];
  return stats;
}

}  // namespace spmvd
