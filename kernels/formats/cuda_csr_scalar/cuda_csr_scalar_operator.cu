#include <memory>
#include <string>
#include <utility>

#include "core/error.hpp"
#include "kernels/cuda/cuda_check.cuh"
#include "kernels/formats/common/builder_checks.hpp"
#include "kernels/formats/common/spmv_device.cuh"
#include "kernels/formats/cuda_csr_scalar/cuda_csr_scalar_rules.hpp"

namespace spmvd {
namespace {

// CSR scalar (Bell & Garland, SC'09, Sec. 3.3): one thread walks one row, grid-stride.
template <typename Value>
__global__ void csr_scalar_kernel(std::int64_t rows, const std::int64_t* __restrict__ row_offsets,
                                  const std::int32_t* __restrict__ col_indices,
                                  const Value* __restrict__ values, const Value* __restrict__ x,
                                  Value* __restrict__ y, Value alpha, Value beta) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t row = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       row < rows; row += stride) {
    Value sum = 0;
    const std::int64_t end = __ldg(row_offsets + row + 1);
    for (std::int64_t k = __ldg(row_offsets + row); k < end; ++k)
      sum += __ldg(values + k) * __ldg(x + __ldg(col_indices + k));
    catalogue_detail::store_axpby(y + row, alpha, sum, beta);
  }
}

template <typename Value>
class CudaCsrScalarOperator final : public SpmvOperator {
 public:
  CudaCsrScalarOperator(std::shared_ptr<const DeviceCsrArrays> csr, const LaunchConfig& launch,
                        const Device& device)
      : rows_(csr->rows),
        launch_(launch),
        stream_(static_cast<cudaStream_t>(device.native_stream())),
        csr_(std::move(csr)) {}

  void apply(const void* x, void* y, double alpha, double beta) override {
    if (rows_ == 0) return;
    csr_scalar_kernel<Value><<<launch_.grid_size, launch_.block_size, 0, stream_>>>(
        rows_, csr_->row_offsets.as<const std::int64_t>(),
        csr_->col_indices.as<const std::int32_t>(), csr_->values.as<const Value>(),
        static_cast<const Value*>(x), static_cast<Value*>(y), static_cast<Value>(alpha),
        static_cast<Value>(beta));
    SPMVD_CUDA_CHECK_LAUNCH();
  }

  Precision precision() const noexcept override { return precision_of<Value>(); }
  std::size_t device_bytes() const noexcept override { return csr_->bytes(); }

 private:
  std::int64_t rows_;
  LaunchConfig launch_;
  cudaStream_t stream_;
  std::shared_ptr<const DeviceCsrArrays> csr_;  // the source's, shared
};

}  // namespace

std::unique_ptr<SpmvOperator> CudaCsrScalarRules::build(const BuildSource& source,
                                                        Precision precision,
                                                        const Candidate& candidate) {
  const LaunchConfig& launch = candidate.launch;
  check_candidate_format("cuda_csr_scalar", kCudaCsrScalarFormatId, candidate);
  check_one_of("cuda_csr_scalar", "block_size", launch.block_size, kCsrScalarBlockSizes);
  if (launch.grid_size == 0) throw_invalid("cuda_csr_scalar: grid_size is 0");
  check_gpu_device("cuda_csr_scalar", source.device());
  if (precision == Precision::fp32)
    return std::make_unique<CudaCsrScalarOperator<float>>(source.device_csr(precision), launch,
                                                          source.device());
  return std::make_unique<CudaCsrScalarOperator<double>>(source.device_csr(precision), launch,
                                                         source.device());
}

}  // namespace spmvd
