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
};

std::shared_ptr<const RcmCsrLayout> make_layout(const BuildSource& source, Precision precision) {
  auto layout = std::make_shared<RcmCsrLayout>();
  RcmRenumbered renumbered = without_device_lock([&] { return rcm_renumbered(source); });
  layout->order = std::move(renumbered.order);
  layout->csr = upload_csr(source.device(), renumbered.matrix, precision);
  layout->device_order =
      upload(source.device(), layout->order->entries.data(), layout->order->entries.size());
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
        x_perm_(device, static_cast<std::size_t>(layout_->csr->cols) * sizeof(Value)) {}

  void apply(const void* x, void* y, double alpha, double beta) override {
    if (layout_->csr->rows == 0) return;
    // x in RCM order first, on the same stream: the kernel reads only x_perm.
    catalogue_detail::launch_gather(layout_->csr->cols,
                                    layout_->device_order.as<const std::int32_t>(),
                                    static_cast<const Value*>(x), x_perm_.as<Value>(), stream_);
    switch (launch_.threads_per_row) {
      case 2:
        return launch<2>(y, alpha, beta);
      case 4:
        return launch<4>(y, alpha, beta);
      case 8:
        return launch<8>(y, alpha, beta);
      case 16:
        return launch<16>(y, alpha, beta);
      case 32:
        return launch<32>(y, alpha, beta);
      default:  // build() admits only kCsrVectorThreadsPerRow, each a case above
        throw Error(ErrorCode::internal, "cuda_csr_rcm: threads_per_row " +
                                             std::to_string(launch_.threads_per_row) +
                                             " has no compiled kernel");
    }
  }

  Precision precision() const noexcept override { return precision_of<Value>(); }
  std::size_t device_bytes() const noexcept override {
    return layout_->csr->bytes() + layout_->device_order.bytes() + x_perm_.bytes();
  }
  std::shared_ptr<const PlanPartition> partition() const override { return layout_->order; }

 private:
  template <int ThreadsPerRow>
  void launch(void* y, double alpha, double beta) {
    const DeviceCsrArrays& csr = *layout_->csr;
    // Row i of P A P^T is the caller's row order[i]: written there.
    csr_vector_detail::csr_vector_kernel<Value, ThreadsPerRow, csr_vector_detail::PermutedRows>
        <<<launch_.grid_size, launch_.block_size, 0, stream_>>>(
            csr.rows, csr.row_offsets.as<const std::int64_t>(),
            csr.col_indices.as<const std::int32_t>(), csr.values.as<const Value>(),
            x_perm_.as<const Value>(), static_cast<Value*>(y), static_cast<Value>(alpha),
            static_cast<Value>(beta),
            csr_vector_detail::PermutedRows{layout_->device_order.as<const std::int32_t>()});
    SPMVD_CUDA_CHECK_LAUNCH();
  }

  LaunchConfig launch_;
  cudaStream_t stream_;
  std::shared_ptr<const RcmCsrLayout> layout_;
  DeviceBuffer x_perm_;  // x in RCM order, written by each apply's gather
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
