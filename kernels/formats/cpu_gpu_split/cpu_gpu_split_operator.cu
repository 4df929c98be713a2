#include <cuda_runtime.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "kernels/cuda/cuda_check.cuh"
#include "kernels/device_lock.hpp"
#include "kernels/formats/common/builder_checks.hpp"
#include "kernels/formats/common/sell_layout.hpp"
#include "kernels/formats/common/spmv_device.cuh"
#include "kernels/formats/cpu_gpu_split/cpu_gpu_split_layout.hpp"
#include "kernels/formats/cpu_gpu_split/cpu_gpu_split_rules.hpp"

namespace spmvd {
namespace {

// y[rows[t]] += alpha * partial[t]: the host part's rows of y added on the GPU (paper 003
// Algorithm 2 line 17, cusparseAxpyi there). The rows are distinct, so no atomics.
template <typename Value>
__global__ void add_host_rows_kernel(std::int64_t count, const std::int32_t* __restrict__ rows,
                                     const Value* __restrict__ partial, Value* __restrict__ y,
                                     Value alpha) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t t = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       t < count; t += stride)
    y[rows[t]] += alpha * partial[t];
}

struct PinnedFree {
  void operator()(void* p) const noexcept { SPMVD_CUDA_CHECK_NO_THROW(cudaFreeHost(p)); }
};
using PinnedBuffer = std::unique_ptr<void, PinnedFree>;

PinnedBuffer allocate_pinned(std::size_t bytes) {
  if (bytes == 0) return PinnedBuffer(nullptr);
  void* p = nullptr;
  const cudaError_t status = cudaMallocHost(&p, bytes);
  if (status == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();
    throw Error(ErrorCode::resource_exhausted,
                "cpu_gpu_split: cannot allocate " + std::to_string(bytes) +
                    " bytes of pinned host memory");
  }
  SPMVD_CUDA_CHECK(status);
  return PinnedBuffer(p);
}

// Algorithm 2 on one device stream, kept asynchronous: apply() never waits on the host. The
// host part's path runs on a second stream of the operator's own, forked from the device's
// stream by an event (so it starts after whatever wrote x) and joined back by another before
// the add: x copied down into a pinned buffer, the COO part multiplied by a host function
// (cudaLaunchHostFunc: oneTBB over the COO part's non-zero chunks on the host while the GPU
// runs the ELL kernel), the partial rows copied up, then added to y on the device's stream. The
// host function makes no CUDA call. Consecutive applies reuse the pinned buffers and the carry
// slots safely: the second stream is in order, and it forks after the previous apply's add.
template <typename Value>
class CpuGpuSplitOperator final : public SpmvOperator {
 public:
  CpuGpuSplitOperator(CpuGpuSplitLayout<Value>&& split, const LaunchConfig& launch,
                      Device& device)
      : rows_(split.rows),
        cols_(split.cols),
        width_(split.ell_width),
        touched_(static_cast<std::int64_t>(split.host.rows.size())),
        launch_(launch),
        stream_(static_cast<cudaStream_t>(device.native_stream())),
        ell_col_indices_(upload(device, split.ell_col_indices.data(), split.ell_col_indices.size())),
        ell_values_(upload(device, split.ell_values.data(), split.ell_values.size())),
        touched_rows_(upload(device, split.host.rows.data(), split.host.rows.size())),
        partial_(device, static_cast<std::size_t>(touched_) * sizeof(Value)),
        host_(std::move(split.host)),
        carries_(static_cast<std::size_t>(host_.carry_slots())) {
    if (touched_ == 0) return;
    // The uploads made the device current: the stream, events and pinned memory belong to it.
    x_host_ = allocate_pinned(static_cast<std::size_t>(cols_) * sizeof(Value));
    partial_host_ = allocate_pinned(static_cast<std::size_t>(touched_) * sizeof(Value));
    try {
      SPMVD_CUDA_CHECK(cudaStreamCreateWithFlags(&side_stream_, cudaStreamNonBlocking));
      SPMVD_CUDA_CHECK(cudaEventCreateWithFlags(&inputs_ready_, cudaEventDisableTiming));
      SPMVD_CUDA_CHECK(cudaEventCreateWithFlags(&partial_ready_, cudaEventDisableTiming));
    } catch (...) {
      release_stream_and_events();
      throw;
    }
  }
  ~CpuGpuSplitOperator() override { release_stream_and_events(); }
  CpuGpuSplitOperator(const CpuGpuSplitOperator&) = delete;
  CpuGpuSplitOperator& operator=(const CpuGpuSplitOperator&) = delete;

  void apply(const void* x_raw, void* y_raw, double alpha, double beta) override {
    if (rows_ == 0) return;
    const auto* x = static_cast<const Value*>(x_raw);
    auto* y = static_cast<Value*>(y_raw);
    if (touched_ > 0) {
      SPMVD_CUDA_CHECK(cudaEventRecord(inputs_ready_, stream_));
      SPMVD_CUDA_CHECK(cudaStreamWaitEvent(side_stream_, inputs_ready_, 0));
      SPMVD_CUDA_CHECK(cudaMemcpyAsync(x_host_.get(), x, static_cast<std::size_t>(cols_) * sizeof(Value),
                                       cudaMemcpyDeviceToHost, side_stream_));
      SPMVD_CUDA_CHECK(cudaLaunchHostFunc(side_stream_, &run_host_part, this));
      SPMVD_CUDA_CHECK(cudaMemcpyAsync(partial_.data(), partial_host_.get(),
                                       static_cast<std::size_t>(touched_) * sizeof(Value),
                                       cudaMemcpyHostToDevice, side_stream_));
      SPMVD_CUDA_CHECK(cudaEventRecord(partial_ready_, side_stream_));
    }
    // Every row passes through the ELL kernel: it applies beta (write-only y for beta == 0), the
    // add only adds.
    catalogue_detail::ell_kernel<Value><<<launch_.grid_size, launch_.block_size, 0, stream_>>>(
        rows_, width_, ell_col_indices_.as<const std::int32_t>(), ell_values_.as<const Value>(), x,
        y, static_cast<Value>(alpha), static_cast<Value>(beta));
    SPMVD_CUDA_CHECK_LAUNCH();
    if (touched_ > 0) {
      SPMVD_CUDA_CHECK(cudaStreamWaitEvent(stream_, partial_ready_, 0));
      const auto blocks =
          static_cast<unsigned>(std::min<std::int64_t>((touched_ + 255) / 256, 4096));
      add_host_rows_kernel<Value><<<blocks, 256, 0, stream_>>>(
          touched_, touched_rows_.as<const std::int32_t>(), partial_.as<const Value>(), y,
          static_cast<Value>(alpha));
      SPMVD_CUDA_CHECK_LAUNCH();
    }
  }

  Precision precision() const noexcept override { return precision_of<Value>(); }
  // The GPU part only (the rules' device_bytes): the COO part and the pinned buffers are host
  // memory.
  std::size_t device_bytes() const noexcept override {
    return ell_col_indices_.bytes() + ell_values_.bytes() + touched_rows_.bytes() +
           partial_.bytes();
  }

 private:
  static void CUDART_CB run_host_part(void* self) {
    auto* op = static_cast<CpuGpuSplitOperator*>(self);
    multiply_host_part(op->host_, static_cast<const Value*>(op->x_host_.get()),
                       static_cast<Value*>(op->partial_host_.get()), op->carries_.data());
  }

  void release_stream_and_events() noexcept {
    // The host function reads this object: wait for the second stream before it goes.
    if (side_stream_) SPMVD_CUDA_CHECK_NO_THROW(cudaStreamSynchronize(side_stream_));
    if (partial_ready_) SPMVD_CUDA_CHECK_NO_THROW(cudaEventDestroy(partial_ready_));
    if (inputs_ready_) SPMVD_CUDA_CHECK_NO_THROW(cudaEventDestroy(inputs_ready_));
    if (side_stream_) SPMVD_CUDA_CHECK_NO_THROW(cudaStreamDestroy(side_stream_));
    partial_ready_ = nullptr;
    inputs_ready_ = nullptr;
    side_stream_ = nullptr;
  }

  std::int64_t rows_;
  std::int64_t cols_;
  std::int64_t width_;
  std::int64_t touched_;
  LaunchConfig launch_;
  cudaStream_t stream_;
  DeviceBuffer ell_col_indices_;
  DeviceBuffer ell_values_;
  DeviceBuffer touched_rows_;
  DeviceBuffer partial_;
  HostCooPart<Value> host_;
  // multiply_host_part's carry slots: used by run_host_part only, which the second stream runs
  // one apply at a time (like the pinned buffers).
  std::vector<Value> carries_;
  PinnedBuffer x_host_;
  PinnedBuffer partial_host_;
  cudaStream_t side_stream_ = nullptr;
  cudaEvent_t inputs_ready_ = nullptr;
  cudaEvent_t partial_ready_ = nullptr;
};

}  // namespace

std::unique_ptr<SpmvOperator> CpuGpuSplitRules::build(const CsrMatrix<double>& matrix,
                                                      Precision precision,
                                                      const Candidate& candidate, Device& device) {
  check_candidate_format("cpu_gpu_split", kCpuGpuSplitFormatId, candidate);
  const CpuGpuSplitParams params = params_of(candidate);
  check_one_of("cpu_gpu_split", "block_size", candidate.launch.block_size, kCpuGpuSplitBlockSizes);
  if (candidate.launch.grid_size == 0) throw_invalid("cpu_gpu_split: grid_size is 0");
  const std::int64_t longest = without_device_lock([&] { return longest_row(matrix); });
  // K = 0 would leave the GPU nothing, K >= the longest row the host nothing: neither is a split.
  if (params.ell_width < 1 || params.ell_width >= longest)
    throw_invalid("cpu_gpu_split: ell_width " + std::to_string(params.ell_width) +
                  " is outside [1, longest row - 1] = [1, " + std::to_string(longest - 1) + "]");
  check_gpu_device("cpu_gpu_split", device);
  if (precision == Precision::fp32)
    return std::make_unique<CpuGpuSplitOperator<float>>(
        without_device_lock(
            [&] { return make_cpu_gpu_split_layout<float>(matrix, params.ell_width); }),
        candidate.launch, device);
  return std::make_unique<CpuGpuSplitOperator<double>>(
      without_device_lock(
          [&] { return make_cpu_gpu_split_layout<double>(matrix, params.ell_width); }),
      candidate.launch, device);
}

}  // namespace spmvd
