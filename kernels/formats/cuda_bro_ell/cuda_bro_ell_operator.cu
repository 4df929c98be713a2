#include <memory>
#include <vector>

#include "core/error.hpp"
#include "kernels/cuda/cuda_check.cuh"
#include "kernels/device_lock.hpp"
#include "kernels/formats/common/bro_parts.cuh"
#include "kernels/formats/common/builder_checks.hpp"
#include "kernels/formats/cuda_bro_ell/bro_ell_part.cuh"
#include "kernels/formats/common/gather_device.cuh"
#include "kernels/formats/cuda_bro_ell/cuda_bro_ell_rules.hpp"

namespace spmvd {
namespace {

template <typename Value>
class CudaBroEllOperator final : public SpmvOperator {
 public:
  CudaBroEllOperator(const BuildSource& source, const BroEllChoice& choice,
                     const LaunchConfig& launch)
      : CudaBroEllOperator(source.host(), choice, launch, source.device(),
                           without_device_lock(
                               [&] { return bro_ell_order_partition(source, choice); })) {}

  void apply(const void* x, void* y, double alpha, double beta) override {
    const auto* x_values = static_cast<const Value*>(x);
    if (rcm_x_.bytes()) {
      // RCM: the kernel runs on P A P^T, so it reads x in RCM order (x_perm[i] = x[order[i]],
      // on the same stream, before it) and writes row i to y[order[i]] itself.
      catalogue_detail::launch_gather(cols_, part_->order(), x_values, rcm_x_.as<Value>(), stream_);
      x_values = rcm_x_.as<const Value>();
    }
    part_->launch(x_values, static_cast<Value*>(y), static_cast<Value>(alpha),
                  static_cast<Value>(beta), stream_);
  }

  Precision precision() const noexcept override { return precision_of<Value>(); }
  std::size_t device_bytes() const noexcept override { return part_->bytes() + rcm_x_.bytes(); }
  std::shared_ptr<const PlanPartition> partition() const override { return order_; }

 private:
  CudaBroEllOperator(const CsrMatrix<double>& matrix, const BroEllChoice& choice,
                     const LaunchConfig& launch, Device& device,
                     std::shared_ptr<const PlanPartition> order)
      : stream_(static_cast<cudaStream_t>(device.native_stream())),
        order_(std::move(order)),
        part_(bro_detail::make_bro_ell_part<Value>(matrix, choice, launch, device, order_.get())),
        rcm_x_(choice.params.reorder == kBroReorderRcm
                   ? DeviceBuffer(device, static_cast<std::size_t>(matrix.cols) * sizeof(Value))
                   : DeviceBuffer()),
        cols_(matrix.cols) {}

  cudaStream_t stream_;
  std::shared_ptr<const PlanPartition> order_;  // BAR's or RCM's, which the plan carries (or null)
  std::unique_ptr<bro_detail::BroEllPart<Value>> part_;
  DeviceBuffer rcm_x_;  // RCM's x in its order (empty without RCM)
  std::int64_t cols_;
};

}  // namespace

std::unique_ptr<SpmvOperator> CudaBroEllRules::build(const BuildSource& source, Precision precision,
                                                     const Candidate& candidate) {
  const CsrMatrix<double>& matrix = source.host();
  Device& device = source.device();
  check_candidate_format("cuda_bro_ell", kCudaBroEllFormatId, candidate);
  const CudaBroEllParams params = params_of(candidate);
  const std::size_t index =
      bro_ell_choice_index("cuda_bro_ell", params, candidate.launch.threads_per_row);
  check_one_of("cuda_bro_ell", "block_size", candidate.launch.block_size,
               std::array<std::uint32_t, 1>{kBroBlockSize});
  if (candidate.launch.grid_size == 0) throw_invalid("cuda_bro_ell: grid_size is 0");
  check_bro_ell_reorder("cuda_bro_ell", params, matrix.rows, matrix.cols);
  check_gpu_device("cuda_bro_ell", device);
  const BroEllChoice& choice = kBroEllChoices[index];
  if (precision == Precision::fp32)
    return std::make_unique<CudaBroEllOperator<float>>(source, choice, candidate.launch);
  return std::make_unique<CudaBroEllOperator<double>>(source, choice, candidate.launch);
}

}  // namespace spmvd
