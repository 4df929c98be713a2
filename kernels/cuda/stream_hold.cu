#include "kernels/cuda/stream_hold.cuh"

#include <atomic>

#include "kernels/cuda/cuda_check.cuh"

namespace spmvd {
namespace {

__device__ std::uint64_t global_timer_ns() {
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void spin_until_released(volatile int* flags, std::uint64_t timeout_ns) {
  const std::uint64_t start = global_timer_ns();
  while (flags[0] == 0) {
    if (global_timer_ns() - start > timeout_ns) {
      flags[1] = 1;
      return;
    }
    __nanosleep(256);  // poll the host's memory over the bus a few times a microsecond
  }
}

}  // namespace

StreamHold::StreamHold() {
  void* host = nullptr;
  // Portable: the flags are made before the owning device is current, and must be mapped
  // into whichever device's context holds the stream.
  SPMVD_CUDA_CHECK(
      cudaHostAlloc(&host, 2 * sizeof(int), cudaHostAllocMapped | cudaHostAllocPortable));
  host_flags_ = static_cast<volatile int*>(host);
  host_flags_[0] = 1;
  host_flags_[1] = 0;
  void* device = nullptr;
  const cudaError_t status = cudaHostGetDevicePointer(&device, host, 0);
  if (status != cudaSuccess) SPMVD_CUDA_CHECK_NO_THROW(cudaFreeHost(host));
  SPMVD_CUDA_CHECK(status);
  device_flags_ = static_cast<int*>(device);
}

StreamHold::~StreamHold() {
  SPMVD_CUDA_CHECK_NO_THROW(cudaFreeHost(const_cast<int*>(host_flags_)));
}

void StreamHold::hold(cudaStream_t stream) {
  host_flags_[0] = 0;
  host_flags_[1] = 0;
  std::atomic_thread_fence(std::memory_order_seq_cst);
  spin_until_released<<<1, 1, 0, stream>>>(device_flags_, kTimeoutNs);
  const cudaError_t status = cudaGetLastError();
  if (status != cudaSuccess) host_flags_[0] = 1;
  SPMVD_CUDA_CHECK(status);
}

void StreamHold::release() noexcept {
  std::atomic_thread_fence(std::memory_order_seq_cst);
  host_flags_[0] = 1;
}

bool StreamHold::timed_out() const noexcept { return host_flags_[1] != 0; }

}  // namespace spmvd
