#pragma once
// The device's own copy bandwidth, measured in the same run as the SpMV timings so that each
// SpMV can be reported as a fraction of what this device streams right now.

#include <cstdint>

#include "kernels/device.hpp"

namespace spmvd {

struct CopyBandwidth {
  std::uint64_t buffer_bytes = 0;  // bytes copied per repetition
  int reps = 0;
  double median_ms = 0.0;
  double gb_per_s = 0.0;  // 2 * buffer_bytes / median time (read + write), 1 GB = 1e9 bytes
};

// Device-to-device copies of max(min_bytes, 4 * L2) bytes (so the copy cannot live in L2),
// two untimed, then the median of `reps` timed with Device::time_ms. Allocates two buffers of
// that size for the duration of the call; throws Error(resource_exhausted) when they do not fit.
CopyBandwidth measure_copy_bandwidth(Device& device, std::uint64_t min_bytes, int reps);

}  // namespace spmvd
