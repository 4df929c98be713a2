#include <algorithm>
#include <memory>
#include <string>
#include <utility>

#include "core/error.hpp"
#include "kernels/cuda/cuda_check.cuh"
#include "kernels/device_lock.hpp"
#include "kernels/formats/common/builder_checks.hpp"
#include "kernels/formats/common/gather_device.cuh"
#include "kernels/formats/cuda_csr_rcm/cuda_csr_rcm_rules.hpp"
#include "kernels/formats/cuda_csr_vector/cuda_csr_vector_kernel.cuh"
#include "kernels/formats/cuda_csr_vector/cuda_csr_vector_rules.hpp"

namespace spmvd {
namespace {

// P A P^T and the order on the device: what every launch of one matrix in one precision
// shares (BuildSource::shared_layout).
struct RcmCsrLayout {
  std::shared_ptr<const PlanPartition> order;  // the plan's partition (host)
  std::shared_ptr<const DeviceCsrArrays> csr;  // P A P^T
  DeviceBuffer device_order;                   // order->entries on the device
  DeviceBuffer device_inverse;                 // inverse[order[i]] = i, on the device
};

// y[j] = y_perm[inverse[j]] (+ beta * y[j]): y read back into the caller's order by a gather,
// not written through the order by the kernel. Written through the order, every row's 8 bytes
// land in a sector of their own while P A P^T streams through L2, and the partial sectors go
// back to memory one by one: on an H100 the renumbered delaunay_n16-x48 (3.1M rows) took 0.32
// ms that way against 0.12 for the same kernel on the mesh in its own order (fp64,
// 2026-11-25). Gathered, the writes are coalesced and the random reads hit y_perm, which the
// kernel has just written and L2 still holds.
template <typename Value>
__global__ void gather_into_y_kernel(std::int64_t size, const std::int32_t* __restrict__ inverse,
                                     const Value* __restrict__ y_perm, Value* __restrict__ y,
                                     Value beta) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t j = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; j < size;
       j += stride) {
    const Value gathered = __ldg(y_perm + __ldg(inverse + j));
    // beta == 0: y is write-only, so NaN already in y cannot leak into the result.
    y[j] = beta == Value(0) ? gathered : gathered + beta * y[j];
  }
}

std::shared_ptr<const RcmCsrLayout> make_layout(const BuildSource& source, Precision precision) {
  auto layout = std::make_shared<RcmCsrLayout>();
  RcmRenumbered renumbered = without_device_lock([&] { return rcm_renumbered(source); });
  layout->order = std::move(renumbered.order);
  layout->csr = upload_csr(source.device(), renumbered.matrix, precision);
  const std::vector<std::int32_t>& order = layout->order->entries;
  layout->device_order = upload(source.device(), order.data(), order.size());
  layout->device_inverse =
      upload(source.device(), renumbered.inverse.data(), renumbered.inverse.size());
  return layout;
}

template <typename Value>
class CudaCsrRcmOperator final : public SpmvOperator {
 public:
  CudaCsrRcmOperator(std::shared_ptr<const RcmCsrLayout> layout, const LaunchConfig& launch,
                     Device& device)
      : launch_(launch),
        stream_(static_cast<cudaStream_t>(device.native_stream())),
        layout_(std::move(layout)),
        x_perm_(device, static_cast<std::size_t>(layout_->csr->cols) * sizeof(Value)),
        y_perm_(device, static_cast<std::size_t>(layout_->csr->rows) * sizeof(Value)) {}

  void apply(const void* x, void* y, double alpha, double beta) override {
    if (layout_->csr->rows == 0) return;
    // x in RCM order first, on the same stream: the kernel reads only x_perm, writes alpha *
    // P A P^T x_perm to y_perm, and y takes it back in the caller's order.
    catalogue_detail::launch_gather(layout_->csr->cols,
                                    layout_->device_order.as<const std::int32_t>(),
                                    static_cast<const Value*>(x), x_perm_.as<Value>(), stream_);
    switch (launch_.threads_per_row) {
      case 2:
        launch<2>(alpha);
        break;
      case 4:
        launch<4>(alpha);
        break;
      case 8:
        launch<8>(alpha);
        break;
      case 16:
        launch<16>(alpha);
        break;
      case 32:
        launch<32>(alpha);
        break;
      default:  // build() admits only kCsrVectorThreadsPerRow, each a case above
        throw Error(ErrorCode::internal, "cuda_csr_rcm: threads_per_row " +
                                             std::to_string(launch_.threads_per_row) +
                                             " has no compiled kernel");
    }
    const std::int64_t rows = layout_->csr->rows;
    const auto blocks = static_cast<unsigned>(std::min<std::int64_t>((rows + 255) / 256, 4096));
    gather_into_y_kernel<Value><<<blocks, 256, 0, stream_>>>(
        rows, layout_->device_inverse.as<const std::int32_t>(), y_perm_.as<const Value>(),
        static_cast<Value*>(y), static_cast<Value>(beta));
    SPMVD_CUDA_CHECK_LAUNCH();
  }

  Precision precision() const noexcept override { return precision_of<Value>(); }
  std::size_t device_bytes() const noexcept override {
    return layout_->csr->bytes() + layout_->device_order.bytes() +
           layout_->device_inverse.bytes() + x_perm_.bytes() + y_perm_.bytes();
  }
  std::shared_ptr<const PlanPartition> partition() const override { return layout_->order; }

 private:
  template <int ThreadsPerRow>
  void launch(double alpha) {
    const DeviceCsrArrays& csr = *layout_->csr;
    csr_vector_detail::csr_vector_kernel<Value, ThreadsPerRow>
        <<<launch_.grid_size, launch_.block_size, 0, stream_>>>(
            csr.rows, csr.row_offsets.as<const std::int64_t>(),
            csr.col_indices.as<const std::int32_t>(), csr.values.as<const Value>(),
            x_perm_.as<const Value>(), y_perm_.as<Value>(), static_cast<Value>(alpha), Value(0));
    SPMVD_CUDA_CHECK_LAUNCH();
  }

  LaunchConfig launch_;
  cudaStream_t stream_;
  std::shared_ptr<const RcmCsrLayout> layout_;
  DeviceBuffer x_perm_;  // x in RCM order, written by each apply's gather
  DeviceBuffer y_perm_;  // alpha * P A P^T x_perm, in RCM order
};

}  // namespace

std::unique_ptr<SpmvOperator> CudaCsrRcmRules::build(const BuildSource& source,
                                                     Precision precision,
                                                     const Candidate& candidate) {
  const LaunchConfig& launch = candidate.launch;
  check_candidate_format("cuda_csr_rcm", kCudaCsrRcmFormatId, candidate);
  check_one_of("cuda_csr_rcm", "threads_per_row", launch.threads_per_row, kCsrVectorThreadsPerRow);
  check_one_of("cuda_csr_rcm", "block_size", launch.block_size, kCsrVectorBlockSizes);
  if (launch.grid_size == 0) throw_invalid("cuda_csr_rcm: grid_size is 0");
  const CsrMatrix<double>& m = source.host();
  if (m.rows != m.cols)
    throw_invalid("cuda_csr_rcm: the matrix is " + std::to_string(m.rows) + " x " +
                  std::to_string(m.cols) +
                  "; RCM renumbers rows and columns alike and needs a square matrix");
  check_gpu_device("cuda_csr_rcm", source.device());
  const std::string key = "cuda_csr_rcm/" + std::string(to_string(precision));
  auto layout = source.shared_layout<RcmCsrLayout>(
      key, [&] { return make_layout(source, precision); });
  if (precision == Precision::fp32)
    return std::make_unique<CudaCsrRcmOperator<float>>(std::move(layout), launch,
                                                        source.device());
  return std::make_unique<CudaCsrRcmOperator<double>>(std::move(layout), launch, source.device());
}

}  // namespace spmvd
