#include "bench/copy_bandwidth.hpp"

#include <algorithm>

#include "bench/timing_stats.hpp"
#include "core/error.hpp"

namespace spmvd {

CopyBandwidth measure_copy_bandwidth(Device& device, std::uint64_t min_bytes, int reps) {
  if (reps < 1) throw_invalid("measure_copy_bandwidth: reps must be >= 1, got " + std::to_string(reps));
  CopyBandwidth result;
  result.buffer_bytes = std::max<std::uint64_t>(min_bytes, 4 * device.info().l2_bytes);
  result.reps = reps;
  DeviceBuffer source(device, result.buffer_bytes), target(device, result.buffer_bytes);
  // Touch both buffers first (first-touch page faults on the host, lazy allocation on some
  // drivers), then two untimed copies.
  device.fill_bytes(source.data(), 0x5A, result.buffer_bytes);
  device.fill_bytes(target.data(), 0x00, result.buffer_bytes);
  for (int i = 0; i < 2; ++i) device.copy_on_device(target.data(), source.data(), result.buffer_bytes);
  device.synchronize();
  std::vector<double> times_ms;
  for (int i = 0; i < reps; ++i)
    times_ms.push_back(device.time_ms(
        [&] { device.copy_on_device(target.data(), source.data(), result.buffer_bytes); }));
  result.median_ms = summarize_timings(times_ms).median_ms;
  result.gb_per_s = 2.0 * static_cast<double>(result.buffer_bytes) / (result.median_ms * 1e6);
  return result;
}

}  // namespace spmvd
