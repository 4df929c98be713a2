#pragma once
// The copies paper 003's host part makes every multiply (x to the host, its rows of y back;
// kernels/formats/cpu_gpu_split/): pinned host memory <-> this GPU, timed in both directions,
// so that CpuGpuTimeCoefficients carries the bus's bandwidth and per-copy latency
// (models/families/cpu_gpu/cpu_gpu_time_model.hpp). The timing needs CUDA
// (host_copy_timing.cu); the fit is plain C++ (models/families/cpu_gpu/cpu_gpu_fit.cpp).

#include <cstdint>
#include <span>
#include <vector>

#include "kernels/device.hpp"

namespace spmvd {

struct HostCopySample {
  std::uint64_t bytes = 0;
  double device_to_host_ms = 0.0;  // median of the timed runs
  double host_to_device_ms = 0.0;
  friend bool operator==(const HostCopySample&, const HostCopySample&) = default;
};

// For each size (bytes > 0), cudaMemcpyAsync between one pinned host buffer and one device
// buffer of the largest size on the device's stream, CUDA events around each copy: warmup_runs
// untimed, then the median of timed_runs (>= 1). Empty on the CPU device and in a build without
// CUDA. Throws Error(resource_exhausted) when the buffers cannot be allocated.
std::vector<HostCopySample> time_pinned_copies(Device& device, std::span<const std::uint64_t> sizes,
                                               int warmup_runs, int timed_runs);

}  // namespace spmvd
