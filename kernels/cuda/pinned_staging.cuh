#pragma once
// Host <-> device copies of large pageable buffers through two pinned staging chunks.
//
// A copy from pageable memory is staged by the driver on one thread, chunk by chunk: on the
// H100 host the CSR uploads of spmv-bench's memory-bound run moved 5-6 GB/s (csr_upload_ms,
// 2026-11-24), a tenth of what PCIe Gen5 carries from pinned memory. Here every core copies
// each chunk between the caller's buffer and pinned memory (oneTBB) while the DMA of the
// previous chunk runs on the stream, so the host copy and the transfer overlap. The caller's
// buffer stays pageable (it is a std::vector or a protobuf field): no registration per call.
//
// Not thread-safe: the owner serialises calls (CudaDevice holds a mutex around them).

#include <cuda_runtime.h>

#include <array>
#include <cstddef>

namespace spmvd::cuda_detail {

class PinnedStaging {
 public:
  // Each chunk's bytes; two are allocated on the first copy (cudaHostAlloc).
  static constexpr std::size_t kChunkBytes = std::size_t{8} << 20;
  // Below this a plain cudaMemcpyAsync is as fast (one chunk cannot overlap anything).
  static constexpr std::size_t kMinBytes = std::size_t{2} << 20;

  PinnedStaging() = default;
  ~PinnedStaging();
  PinnedStaging(const PinnedStaging&) = delete;
  PinnedStaging& operator=(const PinnedStaging&) = delete;

  // Copies `bytes` from host_src to device_dst on `stream` and returns when they have arrived.
  void to_device(cudaStream_t stream, void* device_dst, const void* host_src, std::size_t bytes);
  // Copies `bytes` from device_src to host_dst on `stream` (after the work queued on it) and
  // returns when they are in host_dst.
  void to_host(cudaStream_t stream, void* host_dst, const void* device_src, std::size_t bytes);

 private:
  void allocate();

  std::array<void*, 2> chunks_{};
  std::array<cudaEvent_t, 2> done_{};  // the last DMA through each chunk
  std::array<bool, 2> pending_{};      // whether done_[i] was recorded and not yet waited for
};

}  // namespace spmvd::cuda_detail
