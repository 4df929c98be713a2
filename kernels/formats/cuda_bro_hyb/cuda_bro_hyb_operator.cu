#include <algorithm>
#include <array>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "kernels/cuda/cuda_check.cuh"
#include "kernels/device_lock.hpp"
#include "kernels/formats/common/bro_parts.cuh"
#include "kernels/formats/common/builder_checks.hpp"
#include "kernels/formats/common/sell_layout.hpp"
#include "kernels/formats/cuda_bro_ell/bro_ell_part.cuh"
#include "kernels/formats/cuda_bro_hyb/cuda_bro_hyb_rules.hpp"

namespace spmvd {
namespace {

template <typename Value>
class CudaBroHybOperator final : public SpmvOperator {
 public:
  // `leading`: the ELL part's rows (bro::leading_entries); `bar`: their BAR order where the
  // choice reorders (else null).
  CudaBroHybOperator(const CsrMatrix<double>& matrix, const CsrMatrix<double>& leading,
                     const CudaBroHybParams& params, const BroEllChoice& choice,
                     const LaunchConfig& launch, Device& device,
                     std::shared_ptr<const PlanPartition> bar)
      : stream_(static_cast<cudaStream_t>(device.native_stream())),
        bar_(std::move(bar)),
        ell_(bro_detail::make_bro_ell_part<Value>(leading, choice, launch, device, bar_.get())),
        coo_(without_device_lock([&] {
               return bro::make_bro_coo_layout<Value>(
                   bro::trailing_entries(matrix, params.ell_width), params.interval_rounds);
             }),
             launch.block_size, device) {}

  void apply(const void* x, void* y, double alpha, double beta) override {
    const auto* x_values = static_cast<const Value*>(x);
    auto* y_values = static_cast<Value*>(y);
    // The ELL part covers every row (rows without entries get beta*y), so it also applies beta.
    ell_->launch(x_values, y_values, static_cast<Value>(alpha), static_cast<Value>(beta), stream_);
    coo_.launch(x_values, y_values, static_cast<Value>(alpha), stream_);
  }

  Precision precision() const noexcept override { return precision_of<Value>(); }
  std::size_t device_bytes() const noexcept override { return ell_->bytes() + coo_.bytes(); }
  std::shared_ptr<const PlanPartition> partition() const override { return bar_; }

 private:
  cudaStream_t stream_;
  std::shared_ptr<const PlanPartition> bar_;  // the ELL part's BAR order, which the plan carries
  std::unique_ptr<bro_detail::BroEllPart<Value>> ell_;
  bro_detail::BroCooPart<Value> coo_;
};

}  // namespace

std::unique_ptr<SpmvOperator> CudaBroHybRules::build(const BuildSource& source, Precision precision,
                                                     const Candidate& candidate) {
  const CsrMatrix<double>& matrix = source.host();
  Device& device = source.device();
  check_candidate_format("cuda_bro_hyb", kCudaBroHybFormatId, candidate);
  const CudaBroHybParams params = params_of(candidate);
  const std::size_t index =
      bro_ell_choice_index("cuda_bro_hyb", params.ell(), candidate.launch.threads_per_row);
  bro_coo_rounds_index("cuda_bro_hyb", params.interval_rounds);
  check_bro_hyb_reorder(params);
  const std::int64_t longest = without_device_lock([&] { return longest_row(matrix); });
  if (params.ell_width > longest)
    throw_invalid("cuda_bro_hyb: ell_width " + std::to_string(params.ell_width) +
                  " is above the longest row (" + std::to_string(longest) + ")");
  check_one_of("cuda_bro_hyb", "block_size", candidate.launch.block_size,
               std::array<std::uint32_t, 1>{kBroBlockSize});
  if (candidate.launch.grid_size == 0) throw_invalid("cuda_bro_hyb: grid_size is 0");
  check_gpu_device("cuda_bro_hyb", device);
  const BroEllChoice& choice = kBroEllChoices[index];
  // The host phase: the leading entries and their BAR order (the layouts follow in the parts).
  const CsrMatrix<double> leading =
      without_device_lock([&] { return bro::leading_entries(matrix, params.ell_width); });
  const std::shared_ptr<const PlanPartition> bar = without_device_lock(
      [&] { return bro_hyb_bar_partition(source, leading, params, choice, longest); });
  if (precision == Precision::fp32)
    return std::make_unique<CudaBroHybOperator<float>>(matrix, leading, params, choice,
                                                       candidate.launch, device, bar);
  return std::make_unique<CudaBroHybOperator<double>>(matrix, leading, params, choice,
                                                      candidate.launch, device, bar);
}

}  // namespace spmvd
