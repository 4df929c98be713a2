#pragma once
// Order statistics of repeated timings.

#include <vector>

namespace spmvd {

struct TimingStats {
  double median_ms = 0.0;
  double min_ms = 0.0;
  double p90_ms = 0.0;  // nearest-rank 90th percentile
};

// Throws Error(invalid_argument) for an empty sample.
TimingStats summarize_timings(std::vector<double> times_ms);

}  // namespace spmvd
