#include <algorithm>
#include <memory>
#include <string>
#include <utility>

#include "core/error.hpp"
#include "kernels/cuda/cuda_check.cuh"
#include "kernels/formats/common/builder_checks.hpp"
#include "kernels/formats/cuda_csr_vector/cuda_csr_vector_kernel.cuh"
#include "kernels/formats/cuda_csr_vector/cuda_csr_vector_rules.hpp"

namespace spmvd {
namespace {

template <typename Value>
class CudaCsrVectorOperator final : public SpmvOperator {
 public:
  CudaCsrVectorOperator(std::shared_ptr<const DeviceCsrArrays> csr, const LaunchConfig& launch,
                        const Device& device)
      : rows_(csr->rows),
        launch_(launch),
        stream_(static_cast<cudaStream_t>(device.native_stream())),
        csr_(std::move(csr)) {}

  void apply(const void* x, void* y, double alpha, double beta) override {
    if (rows_ == 0) return;
    csr_vector_detail::launch_csr_vector<Value>(
        "cuda_csr_vector", launch_.threads_per_row, launch_.grid_size, launch_.block_size, stream_,
        rows_, csr_->row_offsets.as<const std::int64_t>(),
        csr_->col_indices.as<const std::int32_t>(), csr_->values.as<const Value>(),
        static_cast<const Value*>(x), static_cast<Value*>(y), static_cast<Value>(alpha),
        static_cast<Value>(beta));
  }

  Precision precision() const noexcept override { return precision_of<Value>(); }
  std::size_t device_bytes() const noexcept override { return csr_->bytes(); }

 private:
  std::int64_t rows_;
  LaunchConfig launch_;
  cudaStream_t stream_;
  std::shared_ptr<const DeviceCsrArrays> csr_;  // the source's, shared
};

bool contains(const auto& list, std::uint32_t value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

}  // namespace

std::unique_ptr<SpmvOperator> CudaCsrVectorRules::build(const BuildSource& source,
                                                        Precision precision,
                                                        const Candidate& candidate) {
  const LaunchConfig& launch = candidate.launch;
  check_candidate_format("cuda_csr_vector", kCudaCsrVectorFormatId, candidate);
  if (!contains(kCsrVectorThreadsPerRow, launch.threads_per_row))
    throw_invalid("cuda_csr_vector: threads_per_row " + std::to_string(launch.threads_per_row) +
                  " is not a compiled variant (2, 4, 8, 16, 32)");
  // The kernel's warp-uniform loop needs whole warps per block.
  if (!contains(kCsrVectorBlockSizes, launch.block_size))
    throw_invalid("cuda_csr_vector: block_size " + std::to_string(launch.block_size) +
                  " is not one of 128, 256, 512");
  if (launch.grid_size == 0) throw_invalid("cuda_csr_vector: grid_size is 0");
  check_gpu_device("cuda_csr_vector", source.device());
  if (precision == Precision::fp32)
    return std::make_unique<CudaCsrVectorOperator<float>>(source.device_csr(precision), launch,
                                                          source.device());
  return std::make_unique<CudaCsrVectorOperator<double>>(source.device_csr(precision), launch,
                                                         source.device());
}

}  // namespace spmvd
