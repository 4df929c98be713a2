#include <memory>
#include <vector>

#include "core/error.hpp"
#include "kernels/cuda/cuda_check.cuh"
#include "kernels/formats/common/bro_parts.cuh"
#include "kernels/formats/common/builder_checks.hpp"
#include "kernels/formats/cuda_bro_ell/cuda_bro_ell_rules.hpp"

namespace spmvd {
namespace {

template <typename Value>
class CudaBroEllOperator final : public SpmvOperator {
 public:
  CudaBroEllOperator(const CsrMatrix<double>& matrix, const BroEllChoice& choice,
                     const LaunchConfig& launch, Device& device)
      : stream_(static_cast<cudaStream_t>(device.native_stream())),
        part_(make_part(matrix, choice, launch, device)) {}

  void apply(const void* x, void* y, double alpha, double beta) override {
    part_->launch(static_cast<const Value*>(x), static_cast<Value*>(y), static_cast<Value>(alpha),
                  static_cast<Value>(beta), stream_);
  }

  Precision precision() const noexcept override { return precision_of<Value>(); }
  std::size_t device_bytes() const noexcept override { return part_->bytes(); }

 private:
  static std::unique_ptr<bro_detail::BroEllPart<Value>> make_part(const CsrMatrix<double>& matrix,
                                                                  const BroEllChoice& choice,
                                                                  const LaunchConfig& launch,
                                                                  Device& device) {
    std::vector<std::int32_t> order;
    const CsrMatrix<double> rows = bro_ell_stream_rows(matrix, choice, order);
    const bro::BroEllLayout<Value> layout = bro::make_bro_ell_layout<Value>(
        rows, choice.params.slice_height, bro_words_per_symbol(choice.params.variant));
    return std::make_unique<bro_detail::BroEllPart<Value>>(
        layout, order, choice.threads_per_row, launch.block_size, launch.grid_size, device);
  }

  cudaStream_t stream_;
  std::unique_ptr<bro_detail::BroEllPart<Value>> part_;
};

}  // namespace

std::unique_ptr<SpmvOperator> CudaBroEllRules::build(const CsrMatrix<double>& matrix,
                                                     Precision precision,
                                                     const Candidate& candidate, Device& device) {
  check_candidate_format("cuda_bro_ell", kCudaBroEllFormatId, candidate);
  const CudaBroEllParams params = params_of(candidate);
  const std::size_t index =
      bro_ell_choice_index("cuda_bro_ell", params, candidate.launch.threads_per_row);
  check_one_of("cuda_bro_ell", "block_size", candidate.launch.block_size,
               std::array<std::uint32_t, 1>{kBroBlockSize});
  if (candidate.launch.grid_size == 0) throw_invalid("cuda_bro_ell: grid_size is 0");
  check_gpu_device("cuda_bro_ell", device);
  const BroEllChoice& choice = kBroEllChoices[index];
  if (precision == Precision::fp32)
    return std::make_unique<CudaBroEllOperator<float>>(matrix, choice, candidate.launch, device);
  return std::make_unique<CudaBroEllOperator<double>>(matrix, choice, candidate.launch, device);
}

}  // namespace spmvd
