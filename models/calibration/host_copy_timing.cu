#include "models/calibration/host_copy_timing.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <memory>

#include "kernels/cuda/cuda_check.cuh"

namespace spmvd {
namespace {

struct PinnedFree {
  void operator()(void* p) const noexcept { SPMVD_CUDA_CHECK_NO_THROW(cudaFreeHost(p)); }
};
struct EventDestroy {
  void operator()(CUevent_st* e) const noexcept { SPMVD_CUDA_CHECK_NO_THROW(cudaEventDestroy(e)); }
};
using Event = std::unique_ptr<CUevent_st, EventDestroy>;

Event make_event() {
  cudaEvent_t e = nullptr;
  SPMVD_CUDA_CHECK(cudaEventCreate(&e));
  return Event(e);
}

double median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

}  // namespace

std::vector<HostCopySample> time_pinned_copies(Device& device, std::span<const std::uint64_t> sizes,
                                               int warmup_runs, int timed_runs) {
  std::vector<HostCopySample> out;
  if (!device.info().is_gpu || sizes.empty()) return out;
  const std::uint64_t largest = *std::max_element(sizes.begin(), sizes.end());
  // Allocating on the device first makes it current for the pinned allocation and the events.
  const DeviceBuffer on_device(device, largest);
  void* pinned_raw = nullptr;
  SPMVD_CUDA_CHECK(cudaMallocHost(&pinned_raw, largest));
  const std::unique_ptr<void, PinnedFree> pinned(pinned_raw);
  std::fill_n(static_cast<unsigned char*>(pinned_raw), largest, 0);
  const auto stream = static_cast<cudaStream_t>(device.native_stream());
  const Event start = make_event();
  const Event stop = make_event();
  const auto time_copy = [&](void* dst, const void* src, std::uint64_t bytes, cudaMemcpyKind kind) {
    SPMVD_CUDA_CHECK(cudaEventRecord(start.get(), stream));
    SPMVD_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, kind, stream));
    SPMVD_CUDA_CHECK(cudaEventRecord(stop.get(), stream));
    SPMVD_CUDA_CHECK(cudaEventSynchronize(stop.get()));
    float ms = 0.0F;
    SPMVD_CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), stop.get()));
    return static_cast<double>(ms);
  };
  const auto median_ms = [&](void* dst, const void* src, std::uint64_t bytes,
                             cudaMemcpyKind kind) {
    for (int i = 0; i < warmup_runs; ++i) time_copy(dst, src, bytes, kind);
    std::vector<double> runs;
    for (int i = 0; i < std::max(1, timed_runs); ++i) runs.push_back(time_copy(dst, src, bytes, kind));
    return median(std::move(runs));
  };
  device.synchronize();
  for (const std::uint64_t bytes : sizes) {
    if (bytes == 0) continue;
    HostCopySample s;
    s.bytes = bytes;
    s.device_to_host_ms =
        median_ms(pinned_raw, on_device.data(), bytes, cudaMemcpyDeviceToHost);
    s.host_to_device_ms =
        median_ms(on_device.data(), pinned_raw, bytes, cudaMemcpyHostToDevice);
    out.push_back(s);
  }
  return out;
}

}  // namespace spmvd
