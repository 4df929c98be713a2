#include <array>
#include <memory>

#include "core/error.hpp"
#include "kernels/cuda/cuda_check.cuh"
#include "kernels/device_lock.hpp"
#include "kernels/formats/common/bro_parts.cuh"
#include "kernels/formats/common/builder_checks.hpp"
#include "kernels/formats/common/spmv_device.cuh"
#include "kernels/formats/cuda_bro_coo/cuda_bro_coo_rules.hpp"

namespace spmvd {
namespace {

template <typename Value>
class CudaBroCooOperator final : public SpmvOperator {
 public:
  CudaBroCooOperator(const CsrMatrix<double>& matrix, std::uint32_t interval_rounds,
                     const LaunchConfig& launch, Device& device)
      : rows_(matrix.rows),
        stream_(static_cast<cudaStream_t>(device.native_stream())),
        part_(without_device_lock(
                  [&] { return bro::make_bro_coo_layout<Value>(matrix, interval_rounds); }),
              launch.block_size, device) {}

  void apply(const void* x, void* y, double alpha, double beta) override {
    auto* y_values = static_cast<Value*>(y);
    catalogue_detail::launch_scale(rows_, y_values, static_cast<Value>(beta), stream_);
    part_.launch(static_cast<const Value*>(x), y_values, static_cast<Value>(alpha), stream_);
  }

  Precision precision() const noexcept override { return precision_of<Value>(); }
  std::size_t device_bytes() const noexcept override { return part_.bytes(); }

 private:
  std::int64_t rows_;
  cudaStream_t stream_;
  bro_detail::BroCooPart<Value> part_;
};

}  // namespace

std::unique_ptr<SpmvOperator> CudaBroCooRules::build(const CsrMatrix<double>& matrix,
                                                     Precision precision,
                                                     const Candidate& candidate, Device& device) {
  check_candidate_format("cuda_bro_coo", kCudaBroCooFormatId, candidate);
  const CudaBroCooParams params = params_of(candidate);
  bro_coo_rounds_index("cuda_bro_coo", params.interval_rounds);
  check_one_of("cuda_bro_coo", "block_size", candidate.launch.block_size,
               std::array<std::uint32_t, 1>{kBroCooBlockSize});
  if (candidate.launch.grid_size == 0) throw_invalid("cuda_bro_coo: grid_size is 0");
  check_gpu_device("cuda_bro_coo", device);
  if (precision == Precision::fp32)
    return std::make_unique<CudaBroCooOperator<float>>(matrix, params.interval_rounds,
                                                       candidate.launch, device);
  return std::make_unique<CudaBroCooOperator<double>>(matrix, params.interval_rounds,
                                                      candidate.launch, device);
}

}  // namespace spmvd
