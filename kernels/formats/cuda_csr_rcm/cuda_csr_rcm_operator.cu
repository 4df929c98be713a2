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
    const DeviceCsrArrays& csr = *layout_->csr;
    if (csr.rows == 0) return;
    // x into RCM order; the kernel on P A P^T from it into y_perm (alpha applied); y back in the
    // caller's order through the inverse (beta applied). y is gathered back, not written through
    // the order by the kernel: written through it, every row's value lands in a sector of its
    // own while P A P^T streams through L2, and the partial sectors go back to memory one by
    // one: the renumbered delaunay_n16-x48 (3.1M rows) took 0.32 ms that way against 0.20
    // gathered back and 0.12 for the kernel on the mesh in its own order (H100, fp64,
    // 2026-11-25, docs/BENCHMARKS.md "cuda_csr_rcm on renumbered matrices"). Gathered, the
    // writes are coalesced and the random reads hit y_perm, which the kernel has just written.
    const auto* order = layout_->device_order.as<const std::int32_t>();
    catalogue_detail::launch_gather(csr.cols, order, static_cast<const Value*>(x),
                                    x_perm_.as<Value>(), stream_);
    csr_vector_detail::launch_csr_vector<Value>(
        "cuda_csr_rcm", launch_.threads_per_row, launch_.grid_size, launch_.block_size, stream_,
        csr.rows, csr.row_offsets.as<const std::int64_t>(),
        csr.col_indices.as<const std::int32_t>(), csr.values.as<const Value>(),
        x_perm_.as<const Value>(), y_perm_.as<Value>(), static_cast<Value>(alpha), Value(0));
    catalogue_detail::launch_gather(csr.rows, layout_->device_inverse.as<const std::int32_t>(),
                                    y_perm_.as<const Value>(), static_cast<Value*>(y), stream_,
                                    static_cast<Value>(beta));
  }

  Precision precision() const noexcept override { return precision_of<Value>(); }
  std::size_t device_bytes() const noexcept override {
    return layout_->csr->bytes() + layout_->device_order.bytes() +
           layout_->device_inverse.bytes() + x_perm_.bytes() + y_perm_.bytes();
  }
  std::shared_ptr<const PlanPartition> partition() const override { return layout_->order; }

 private:
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
