// The host as a Device: memory is ordinary (aligned) host memory, copies are memcpy, work runs
// synchronously, so time_ms is the steady clock around it.

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>

#include "core/error.hpp"
#include "kernels/device.hpp"
#include "kernels/hashed_uniform.hpp"

namespace spmvd {
namespace {

// Cache-line alignment, so that vector loads and TBB's row ranges never share a line with
// another allocation.
constexpr std::size_t kAlignmentBytes = 64;

// Entries per oneTBB task of fill_hashed_uniform: a few nanoseconds each, so a task of 2^14
// outweighs its scheduling, and a vector shorter than that is filled on the calling thread.
constexpr std::size_t kHashedFillGrain = std::size_t{1} << 14;

template <typename Value>
void fill_hashed(Value* out, std::size_t count, std::uint64_t seed) {
  const auto fill = [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i)
      out[i] = static_cast<Value>(hashed_uniform(seed, static_cast<std::uint64_t>(i)));
  };
  if (count <= kHashedFillGrain) {
    fill(0, count);
    return;
  }
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, count, kHashedFillGrain),
                    [&](const tbb::blocked_range<std::size_t>& r) { fill(r.begin(), r.end()); });
}

}  // namespace

std::string cpu_model_name() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("model name", 0) != 0) continue;
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    const auto start = line.find_first_not_of(" \t", colon + 1);
    return start == std::string::npos ? std::string("unknown CPU") : line.substr(start);
  }
  return "unknown CPU";  // e.g. aarch64 kernels that do not print "model name"
}

int cpu_hardware_threads() noexcept {
  return static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
}

namespace {

DeviceInfo read_cpu_info() {
  DeviceInfo info;
  info.is_gpu = false;
  info.name = cpu_model_name();
  info.sm_count = cpu_hardware_threads();
  const long pages = sysconf(_SC_PHYS_PAGES), page_bytes = sysconf(_SC_PAGESIZE);
  if (pages > 0 && page_bytes > 0)
    info.memory_bytes = static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page_bytes);
  const long l2_bytes = sysconf(_SC_LEVEL2_CACHE_SIZE);
  if (l2_bytes > 0) info.l2_bytes = static_cast<std::uint64_t>(l2_bytes);
  info.warp_size = 1;
  return info;
}

class CpuDevice final : public Device {
 public:
  CpuDevice() : info_(read_cpu_info()) {}

  const DeviceInfo& info() const noexcept override { return info_; }

  void* allocate(std::size_t bytes) override {
    // aligned_alloc wants a multiple of the alignment.
    const std::size_t rounded = (bytes + kAlignmentBytes - 1) / kAlignmentBytes * kAlignmentBytes;
    void* pointer = std::aligned_alloc(kAlignmentBytes, rounded ? rounded : kAlignmentBytes);
    if (!pointer)
      throw Error(ErrorCode::resource_exhausted,
                  "cpu device: cannot allocate " + std::to_string(bytes) + " bytes of host memory");
    return pointer;
  }
  void release(void* pointer) noexcept override { std::free(pointer); }

  void copy_from_host(void* device_dst, const void* host_src, std::size_t bytes) override {
    if (bytes) std::memcpy(device_dst, host_src, bytes);
  }
  void copy_to_host(void* host_dst, const void* device_src, std::size_t bytes) override {
    if (bytes) std::memcpy(host_dst, device_src, bytes);
  }
  void copy_on_device(void* device_dst, const void* device_src, std::size_t bytes) override {
    if (bytes) std::memmove(device_dst, device_src, bytes);
  }
  void fill_bytes(void* device_dst, unsigned char byte, std::size_t bytes) override {
    if (bytes) std::memset(device_dst, byte, bytes);
  }
  void fill_hashed_uniform(void* device_dst, std::size_t count, Precision precision,
                           std::uint64_t seed) override {
    if (precision == Precision::fp64)
      fill_hashed(static_cast<double*>(device_dst), count, seed);
    else
      fill_hashed(static_cast<float*>(device_dst), count, seed);
  }
  void synchronize() override {}  // host work is synchronous

  double time_ms(const std::function<void()>& work) override {
    const auto start = std::chrono::steady_clock::now();
    work();
    const auto stop = std::chrono::steady_clock::now();
    return std::chrono::duration<double, std::milli>(stop - start).count();
  }
  void* native_stream() const noexcept override { return nullptr; }

 private:
  DeviceInfo info_;
};

}  // namespace

std::unique_ptr<Device> make_cpu_device() { return std::make_unique<CpuDevice>(); }

}  // namespace spmvd
