#include <memory>
#include <string>
#include <utility>

#include "core/error.hpp"
#include "kernels/cuda/cuda_check.cuh"
#include "kernels/formats/common/builder_checks.hpp"
#include "kernels/formats/common/csr_derived_arrays.hpp"
#include "kernels/formats/common/segmented_coo_kernel.cuh"
#include "kernels/formats/common/spmv_device.cuh"
#include "kernels/formats/cuda_coo/cuda_coo_rules.hpp"

namespace spmvd {
namespace {

template <typename Value>
class CudaCooOperator final : public SpmvOperator {
 public:
  // COO in CSR order: the CSR's own columns and values, and row indices expanded from its
  // offsets on the device (shared by every launch candidate of the matrix).
  CudaCooOperator(std::shared_ptr<const DeviceCsrArrays> csr,
                  std::shared_ptr<const DeviceBuffer> row_indices, const LaunchConfig& launch,
                  const Device& device)
      : rows_(csr->rows),
        nnz_(csr->nnz),
        launch_(launch),
        stream_(static_cast<cudaStream_t>(device.native_stream())),
        csr_(std::move(csr)),
        row_indices_(std::move(row_indices)) {}

  void apply(const void* x, void* y_raw, double alpha, double beta) override {
    auto* y = static_cast<Value*>(y_raw);
    catalogue_detail::launch_scale(rows_, y, static_cast<Value>(beta), stream_);
    catalogue_detail::launch_coo_segmented(
        nnz_, row_indices_->as<const std::int32_t>(), csr_->col_indices.as<const std::int32_t>(),
        csr_->values.as<const Value>(), static_cast<const Value*>(x), y, static_cast<Value>(alpha),
        launch_.grid_size, launch_.block_size, stream_);
  }

  Precision precision() const noexcept override { return precision_of<Value>(); }
  std::size_t device_bytes() const noexcept override {
    return row_indices_->bytes() + csr_->col_indices.bytes() + csr_->values.bytes();
  }

 private:
  std::int64_t rows_;
  std::int64_t nnz_;
  LaunchConfig launch_;
  cudaStream_t stream_;
  std::shared_ptr<const DeviceCsrArrays> csr_;       // the source's: columns and values
  std::shared_ptr<const DeviceBuffer> row_indices_;  // int32, nnz; shared_row_indices
};

}  // namespace

std::unique_ptr<SpmvOperator> CudaCooRules::build(const BuildSource& source, Precision precision,
                                                  const Candidate& candidate) {
  check_candidate_format("cuda_coo", kCudaCooFormatId, candidate);
  check_one_of("cuda_coo", "block_size", candidate.launch.block_size, kCooBlockSizes);
  if (candidate.launch.grid_size == 0) throw_invalid("cuda_coo: grid_size is 0");
  check_gpu_device("cuda_coo", source.device());
  if (source.host().rows > kMaxDimension)
    throw_invalid("cuda_coo: " + std::to_string(source.host().rows) +
                  " rows do not fit 32-bit row indices");
  std::shared_ptr<const DeviceCsrArrays> csr = source.device_csr(precision);
  std::shared_ptr<const DeviceBuffer> row_indices = shared_row_indices(source, *csr);
  if (precision == Precision::fp32)
    return std::make_unique<CudaCooOperator<float>>(std::move(csr), std::move(row_indices),
                                                    candidate.launch, source.device());
  return std::make_unique<CudaCooOperator<double>>(std::move(csr), std::move(row_indices),
                                                   candidate.launch, source.device());
}

}  // namespace spmvd
