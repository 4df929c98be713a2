#include "kernels/cuda/pinned_staging.cuh"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cstring>

#include "kernels/cuda/cuda_check.cuh"

namespace spmvd::cuda_detail {
namespace {

// Pieces of a chunk copied on the host by one task each: 1 MB keeps 8 cores busy on a chunk.
constexpr std::size_t kHostPieceBytes = std::size_t{1} << 20;

void parallel_memcpy(void* dst, const void* src, std::size_t bytes) {
  auto* out = static_cast<unsigned char*>(dst);
  const auto* in = static_cast<const unsigned char*>(src);
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, bytes, kHostPieceBytes),
                    [&](const tbb::blocked_range<std::size_t>& r) {
                      std::memcpy(out + r.begin(), in + r.begin(), r.size());
                    });
}

}  // namespace

PinnedStaging::~PinnedStaging() {
  // Every copy returned after its DMA: nothing is in flight through the chunks.
  for (std::size_t i = 0; i < chunks_.size(); ++i) {
    if (done_[i]) SPMVD_CUDA_CHECK_NO_THROW(cudaEventDestroy(done_[i]));
    if (chunks_[i]) SPMVD_CUDA_CHECK_NO_THROW(cudaFreeHost(chunks_[i]));
  }
}

void PinnedStaging::allocate() {
  if (chunks_[0] != nullptr) return;
  for (std::size_t i = 0; i < chunks_.size(); ++i) {
    SPMVD_CUDA_CHECK(cudaHostAlloc(&chunks_[i], kChunkBytes, cudaHostAllocDefault));
    SPMVD_CUDA_CHECK(cudaEventCreateWithFlags(&done_[i], cudaEventDisableTiming));
  }
}

void PinnedStaging::to_device(cudaStream_t stream, void* device_dst, const void* host_src,
                              std::size_t bytes) {
  allocate();
  auto* dst = static_cast<unsigned char*>(device_dst);
  const auto* src = static_cast<const unsigned char*>(host_src);
  for (std::size_t offset = 0, i = 0; offset < bytes; offset += kChunkBytes, ++i) {
    const std::size_t b = i % chunks_.size();
    const std::size_t n = std::min(kChunkBytes, bytes - offset);
    // The chunk's previous DMA must have read it before the host overwrites it.
    if (pending_[b]) SPMVD_CUDA_CHECK(cudaEventSynchronize(done_[b]));
    parallel_memcpy(chunks_[b], src + offset, n);
    SPMVD_CUDA_CHECK(
        cudaMemcpyAsync(dst + offset, chunks_[b], n, cudaMemcpyHostToDevice, stream));
    SPMVD_CUDA_CHECK(cudaEventRecord(done_[b], stream));
    pending_[b] = true;
  }
  SPMVD_CUDA_CHECK(cudaStreamSynchronize(stream));
  pending_.fill(false);
}

void PinnedStaging::to_host(cudaStream_t stream, void* host_dst, const void* device_src,
                            std::size_t bytes) {
  allocate();
  auto* dst = static_cast<unsigned char*>(host_dst);
  const auto* src = static_cast<const unsigned char*>(device_src);
  const std::size_t chunks = (bytes + kChunkBytes - 1) / kChunkBytes;
  const auto enqueue = [&](std::size_t i) {
    const std::size_t b = i % chunks_.size();
    const std::size_t offset = i * kChunkBytes;
    SPMVD_CUDA_CHECK(cudaMemcpyAsync(chunks_[b], src + offset,
                                     std::min(kChunkBytes, bytes - offset),
                                     cudaMemcpyDeviceToHost, stream));
    SPMVD_CUDA_CHECK(cudaEventRecord(done_[b], stream));
    pending_[b] = true;
  };
  // A chunk a failed earlier copy may still be filling is waited for first.
  for (std::size_t b = 0; b < chunks_.size(); ++b)
    if (pending_[b]) SPMVD_CUDA_CHECK(cudaEventSynchronize(done_[b]));
  pending_.fill(false);
  // Chunk i + 1's DMA runs while the host copies chunk i out; chunk i + 2 reuses i's buffer,
  // so it is queued only after that copy.
  enqueue(0);
  for (std::size_t i = 0; i < chunks; ++i) {
    if (i + 1 < chunks) enqueue(i + 1);
    const std::size_t b = i % chunks_.size();
    SPMVD_CUDA_CHECK(cudaEventSynchronize(done_[b]));
    pending_[b] = false;
    const std::size_t offset = i * kChunkBytes;
    parallel_memcpy(dst + offset, chunks_[b], std::min(kChunkBytes, bytes - offset));
  }
}

}  // namespace spmvd::cuda_detail
