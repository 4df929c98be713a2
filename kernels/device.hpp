#pragma once
// A memory space with a clock: the GPU (kernels/cuda/cuda_device) or the host CPU
// (kernels/cpu/cpu_device). Operators, the tuner and the server reach device memory only
// through this interface, so everything above kernels/ builds with g++ alone.
//
// Thread safety: a Device may be used from several threads, but work on it is ordered on one
// stream; callers that need a consistent result serialise apply() + copies themselves.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>

#include "core/device_info.hpp"
#include "core/precision.hpp"

namespace spmvd {

class Device {
 public:
  virtual ~Device() = default;
  virtual const DeviceInfo& info() const noexcept = 0;

  // Throws Error(resource_exhausted) when the memory is not there. On the GPU both are ordered
  // on the device's stream (a pool that keeps freed memory for the next allocation): memory is
  // used only by work on that stream, or by work that waits for it.
  virtual void* allocate(std::size_t bytes) = 0;
  virtual void release(void* pointer) noexcept = 0;
  // Gives memory released to the pool back to the system, once the work before it is done (the
  // daemon's trimmer calls it after matrices are released). Nothing where there is no pool.
  virtual void release_unused_memory() noexcept {}
  virtual void copy_from_host(void* device_dst, const void* host_src, std::size_t bytes) = 0;
  virtual void copy_to_host(void* host_dst, const void* device_src, std::size_t bytes) = 0;
  virtual void copy_on_device(void* device_dst, const void* device_src, std::size_t bytes) = 0;
  // Sets every byte to `byte`: used to poison outputs before a checked run.
  virtual void fill_bytes(void* device_dst, unsigned char byte, std::size_t bytes) = 0;
  // Writes `count` values of `precision`: entry i is hashed_uniform(seed, i)
  // (kernels/hashed_uniform.hpp), rounded to nearest for fp32; the same bits on every backend.
  // Computed where the memory is (a kernel on the GPU), so no host vector crosses PCIe.
  // Ordered like the copies: asynchronous on the GPU's stream.
  virtual void fill_hashed_uniform(void* device_dst, std::size_t count, Precision precision,
                                   std::uint64_t seed) = 0;
  // Waits until all work issued on this device has finished; throws on a device fault.
  virtual void synchronize() = 0;
  // Runs `work` (which issues device work) once and returns its duration in milliseconds:
  // on the GPU, CUDA events around it on the device's stream, held while `work` is issued so
  // that only the GPU's execution is timed, not the host's launch calls
  // (kernels/cuda/stream_hold.cuh); on the CPU, the steady clock.
  virtual double time_ms(const std::function<void()>& work) = 0;
  // The CUDA stream (cudaStream_t) operators must launch on; nullptr for the CPU.
  virtual void* native_stream() const noexcept = 0;
};

// CUDA allocations' alignment (256 bytes; the CPU device's is 64): regions carved out of one buffer
// at multiples of it are as aligned as their own allocations would be, on every backend.
inline constexpr std::size_t kDeviceAlignmentBytes = 256;
constexpr std::size_t round_up_to_device_alignment(std::size_t bytes) noexcept {
  return (bytes + kDeviceAlignmentBytes - 1) / kDeviceAlignmentBytes * kDeviceAlignmentBytes;
}

// Owns `bytes` of device memory; move-only.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(Device& device, std::size_t bytes)
      : device_(&device), data_(bytes ? device.allocate(bytes) : nullptr), bytes_(bytes) {}
  DeviceBuffer(DeviceBuffer&& other) noexcept { swap(other); }
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    DeviceBuffer(std::move(other)).swap(*this);
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() {
    if (data_) device_->release(data_);
  }

  void* data() const noexcept { return data_; }
  // The address `offset_bytes` into the buffer, for one allocation carved into regions (one
  // allocation instead of one per region); null for an empty buffer.
  void* data_at(std::size_t offset_bytes) const noexcept {
    return data_ ? static_cast<unsigned char*>(data_) + offset_bytes : nullptr;
  }
  template <typename T>
  T* as() const noexcept { return static_cast<T*>(data_); }
  std::size_t bytes() const noexcept { return bytes_; }

  void swap(DeviceBuffer& other) noexcept {
    std::swap(device_, other.device_);
    std::swap(data_, other.data_);
    std::swap(bytes_, other.bytes_);
  }

 private:
  Device* device_ = nullptr;
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
};

// Copies a host array into a new device buffer.
template <typename T>
DeviceBuffer upload(Device& device, const T* host, std::size_t count) {
  DeviceBuffer buffer(device, count * sizeof(T));
  if (count) device.copy_from_host(buffer.data(), host, count * sizeof(T));
  return buffer;
}

std::unique_ptr<Device> make_cpu_device();
// The host CPU's model name (/proc/cpuinfo; "unknown CPU" where the kernel prints none) and its
// hardware threads: the CPU device's name and size, and the host a GPU device names.
std::string cpu_model_name();
int cpu_hardware_threads() noexcept;
// Number of CUDA devices visible (0 when built without CUDA or when no driver/GPU is present).
int cuda_device_count() noexcept;
// Throws Error(failed_precondition) when built without CUDA or the ordinal does not exist.
std::unique_ptr<Device> make_cuda_device(int ordinal);

}  // namespace spmvd
