// The GPU as a Device: one CUDA device, one non-blocking stream that this object owns and on
// which every copy, fill, timing and operator launch is ordered.

#include <cuda_runtime.h>
#include <cusparse.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <mutex>
#include <string>

#include "core/error.hpp"
#include "kernels/cuda/cuda_check.cuh"
#include "kernels/cuda/host_log.hpp"
#include "kernels/cuda/pinned_staging.cuh"
#include "kernels/cuda/stream_hold.cuh"
#include "kernels/device.hpp"
#include "kernels/hashed_uniform.hpp"

namespace spmvd {
namespace {

// Device::fill_hashed_uniform: one thread per entry, grid-stride for vectors beyond the grid.
template <typename Value>
__global__ void fill_hashed_uniform_kernel(Value* out, std::uint64_t count, std::uint64_t seed) {
  const std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  for (std::uint64_t i = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < count; i += stride)
    out[i] = static_cast<Value>(hashed_uniform(seed, i));
}

constexpr int kFillThreadsPerBlock = 256;
// Enough blocks to fill every SM many times over (2^16 x 256 threads = 16.7M entries in one
// pass); longer vectors loop.
constexpr std::uint64_t kFillMaxBlocks = std::uint64_t{1} << 16;

DeviceInfo read_device_info(int ordinal) {
  cudaDeviceProp props{};
  SPMVD_CUDA_CHECK(cudaGetDeviceProperties(&props, ordinal));
  DeviceInfo info;
  info.is_gpu = true;
  info.name = props.name;
  info.compute_capability_major = props.major;
  info.compute_capability_minor = props.minor;
  info.sm_count = props.multiProcessorCount;
  info.memory_bytes = props.totalGlobalMem;
  info.l2_bytes = static_cast<std::uint64_t>(props.l2CacheSize);
  info.warp_size = props.warpSize;
  info.max_threads_per_sm = props.maxThreadsPerMultiProcessor;
  info.max_blocks_per_sm = props.maxBlocksPerMultiProcessor;
  info.registers_per_sm = props.regsPerMultiprocessor;
  info.shared_memory_per_sm_bytes = props.sharedMemPerMultiprocessor;
  info.host = cpu_model_name() + " x" + std::to_string(cpu_hardware_threads());
  SPMVD_CUDA_CHECK(cudaDriverGetVersion(&info.driver_version));
  SPMVD_CUDA_CHECK(cudaRuntimeGetVersion(&info.runtime_version));
  // cusparseGetVersion needs a handle; creating one also proves the library loads.
  cusparseHandle_t handle = nullptr;
  SPMVD_CUSPARSE_CHECK(cusparseCreate(&handle));
  const cusparseStatus_t version_status = cusparseGetVersion(handle, &info.cusparse_version);
  cusparseDestroy(handle);
  SPMVD_CUSPARSE_CHECK(version_status);
  return info;
}

class CudaDevice final : public Device {
 public:
  explicit CudaDevice(int ordinal) : ordinal_(ordinal) {
    SPMVD_CUDA_CHECK(cudaSetDevice(ordinal_));
    info_ = read_device_info(ordinal_);
    SPMVD_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    try {
      use_pool_ = memory_pools_supported(ordinal_);
      if (use_pool_) {
        // Stream-ordered allocation from the device's pool, which keeps what is freed for the
        // next allocation instead of returning it at every synchronisation: a tuning builds and
        // drops candidates of similar sizes one after another, and cudaMalloc / cudaFree cost
        // a page mapping and a device-wide synchronisation each (docs/OPERATIONS.md "Memory").
        // allocate() gives the pool's free memory back when a request does not fit.
        SPMVD_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool_, ordinal_));
        std::uint64_t keep_all = std::numeric_limits<std::uint64_t>::max();
        SPMVD_CUDA_CHECK(cudaMemPoolSetAttribute(pool_, cudaMemPoolAttrReleaseThreshold, &keep_all));
      }
      // time_ms's two events, made once: every Multiply request is timed.
      SPMVD_CUDA_CHECK(cudaEventCreate(&start_));
      SPMVD_CUDA_CHECK(cudaEventCreate(&stop_));
    } catch (...) {
      release_stream_and_events();
      throw;
    }
  }
  ~CudaDevice() override {
    SPMVD_CUDA_CHECK_NO_THROW(cudaSetDevice(ordinal_));
    SPMVD_CUDA_CHECK_NO_THROW(cudaStreamSynchronize(stream_));
    release_stream_and_events();
  }
  CudaDevice(const CudaDevice&) = delete;
  CudaDevice& operator=(const CudaDevice&) = delete;

  const DeviceInfo& info() const noexcept override { return info_; }

  // Ordered on the stream like every use of the memory (the split's side stream waits on an
  // event of this stream before it touches its buffers, and is synchronised before they go).
  void* allocate(std::size_t bytes) override {
    SPMVD_CUDA_CHECK(cudaSetDevice(ordinal_));
    void* pointer = nullptr;
    cudaError_t status = use_pool_ ? cudaMallocAsync(&pointer, bytes, stream_)
                                   : cudaMalloc(&pointer, bytes);
    if (status == cudaErrorMemoryAllocation && use_pool_) {
      // The pool may hold freed memory in pieces this request does not fit: once the frees
      // before it have completed, all of it goes back to the device, and the request is tried
      // again.
      (void)cudaGetLastError();
      SPMVD_CUDA_CHECK(cudaStreamSynchronize(stream_));
      SPMVD_CUDA_CHECK(cudaMemPoolTrimTo(pool_, 0));
      status = cudaMallocAsync(&pointer, bytes, stream_);
    }
    if (status == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();
      throw Error(ErrorCode::resource_exhausted,
                  "cuda device " + std::to_string(ordinal_) + " (" + info_.name +
                      "): cannot allocate " + std::to_string(bytes) + " bytes of device memory");
    }
    SPMVD_CUDA_CHECK(status);
    return pointer;
  }
  void release(void* pointer) noexcept override {
    SPMVD_CUDA_CHECK_NO_THROW(cudaSetDevice(ordinal_));
    if (use_pool_)
      SPMVD_CUDA_CHECK_NO_THROW(cudaFreeAsync(pointer, stream_));
    else
      SPMVD_CUDA_CHECK_NO_THROW(cudaFree(pointer));
  }

  void release_unused_memory() noexcept override {
    if (!use_pool_) return;
    SPMVD_CUDA_CHECK_NO_THROW(cudaSetDevice(ordinal_));
    // Frees count as done once the host has seen the stream pass them.
    SPMVD_CUDA_CHECK_NO_THROW(cudaStreamSynchronize(stream_));
    SPMVD_CUDA_CHECK_NO_THROW(cudaMemPoolTrimTo(pool_, 0));
  }

  // Host copies wait for the stream: the host buffer may be reused as soon as they return.
  // Large ones go through the pinned staging chunks (kernels/cuda/pinned_staging.cuh).
  void copy_from_host(void* device_dst, const void* host_src, std::size_t bytes) override {
    if (bytes >= cuda_detail::PinnedStaging::kMinBytes) {
      SPMVD_CUDA_CHECK(cudaSetDevice(ordinal_));
      const std::lock_guard lock(staging_mutex_);
      staging_.to_device(stream_, device_dst, host_src, bytes);
      return;
    }
    copy(device_dst, host_src, bytes, cudaMemcpyHostToDevice);
    synchronize();
  }
  void copy_to_host(void* host_dst, const void* device_src, std::size_t bytes) override {
    if (bytes >= cuda_detail::PinnedStaging::kMinBytes) {
      SPMVD_CUDA_CHECK(cudaSetDevice(ordinal_));
      const std::lock_guard lock(staging_mutex_);
      staging_.to_host(stream_, host_dst, device_src, bytes);
      return;
    }
    copy(host_dst, device_src, bytes, cudaMemcpyDeviceToHost);
    synchronize();
  }
  void copy_on_device(void* device_dst, const void* device_src, std::size_t bytes) override {
    copy(device_dst, device_src, bytes, cudaMemcpyDeviceToDevice);
  }
  void fill_bytes(void* device_dst, unsigned char byte, std::size_t bytes) override {
    if (!bytes) return;
    SPMVD_CUDA_CHECK(cudaSetDevice(ordinal_));
    SPMVD_CUDA_CHECK(cudaMemsetAsync(device_dst, byte, bytes, stream_));
  }
  void fill_hashed_uniform(void* device_dst, std::size_t count, Precision precision,
                           std::uint64_t seed) override {
    if (!count) return;
    SPMVD_CUDA_CHECK(cudaSetDevice(ordinal_));
    const std::uint64_t n = count;
    const auto blocks = static_cast<unsigned>(
        std::min<std::uint64_t>((n + kFillThreadsPerBlock - 1) / kFillThreadsPerBlock,
                                kFillMaxBlocks));
    if (precision == Precision::fp64)
      fill_hashed_uniform_kernel<<<blocks, kFillThreadsPerBlock, 0, stream_>>>(
          static_cast<double*>(device_dst), n, seed);
    else
      fill_hashed_uniform_kernel<<<blocks, kFillThreadsPerBlock, 0, stream_>>>(
          static_cast<float*>(device_dst), n, seed);
    SPMVD_CUDA_CHECK_LAUNCH();
  }
  void synchronize() override {
    SPMVD_CUDA_CHECK(cudaSetDevice(ordinal_));
    SPMVD_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

  // The stream is held while `work` is issued (kernels/cuda/stream_hold.cuh), so the events
  // time the GPU's execution alone, not the host's launch calls.
  double time_ms(const std::function<void()>& work) override {
    std::lock_guard lock(timing_mutex_);  // one hold and one pair of events at a time
    SPMVD_CUDA_CHECK(cudaSetDevice(ordinal_));
    hold_.hold(stream_);
    {
      // Lets the stream go on every path, including when `work` throws.
      struct Release {
        StreamHold& hold;
        ~Release() { hold.release(); }
      } release{hold_};
      SPMVD_CUDA_CHECK(cudaEventRecord(start_, stream_));
      work();
      SPMVD_CUDA_CHECK(cudaEventRecord(stop_, stream_));
    }
    SPMVD_CUDA_CHECK(cudaEventSynchronize(stop_));
    if (hold_.timed_out() && hold_timeouts_++ == 0)
      cuda_detail::log_warning(
          "cuda device " + std::to_string(ordinal_) +
          ": timed work waited for the host behind the stream hold; this and later such "
          "timings include the host's time");
    float elapsed_ms = 0.0F;
    SPMVD_CUDA_CHECK(cudaEventElapsedTime(&elapsed_ms, start_, stop_));
    return elapsed_ms;
  }

  void* native_stream() const noexcept override { return stream_; }

 private:
  void release_stream_and_events() noexcept {
    if (stop_) SPMVD_CUDA_CHECK_NO_THROW(cudaEventDestroy(stop_));
    if (start_) SPMVD_CUDA_CHECK_NO_THROW(cudaEventDestroy(start_));
    SPMVD_CUDA_CHECK_NO_THROW(cudaStreamDestroy(stream_));
  }
  void copy(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind) {
    if (!bytes) return;
    SPMVD_CUDA_CHECK(cudaSetDevice(ordinal_));
    SPMVD_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, kind, stream_));
  }

  static bool memory_pools_supported(int ordinal) {
    int supported = 0;
    SPMVD_CUDA_CHECK(cudaDeviceGetAttribute(&supported, cudaDevAttrMemoryPoolsSupported, ordinal));
    return supported != 0;
  }

  int ordinal_;
  DeviceInfo info_;
  cudaStream_t stream_ = nullptr;
  bool use_pool_ = false;
  cudaMemPool_t pool_ = nullptr;
  std::mutex timing_mutex_;
  cudaEvent_t start_ = nullptr;
  cudaEvent_t stop_ = nullptr;
  StreamHold hold_;
  std::uint64_t hold_timeouts_ = 0;
  std::mutex staging_mutex_;  // one large host copy at a time through the chunks
  cuda_detail::PinnedStaging staging_;
};

}  // namespace

int cuda_device_count() noexcept {
  int count = 0;
  // No driver, no GPU or a broken install all mean "no CUDA device here", never an exception.
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return count;
}

std::unique_ptr<Device> make_cuda_device(int ordinal) {
  const int count = cuda_device_count();
  if (ordinal < 0 || ordinal >= count)
    throw Error(ErrorCode::failed_precondition,
                "cannot open CUDA device " + std::to_string(ordinal) + ": " +
                    std::to_string(count) + " CUDA device(s) visible");
  return std::make_unique<CudaDevice>(ordinal);
}

}  // namespace spmvd
