#include <string>

#include "core/error.hpp"
#include "kernels/cuda/cuda_check.cuh"
#include "kernels/formats/common/builder_checks.hpp"
#include "kernels/formats/common/spmv_device.cuh"
#include "kernels/formats/cuda_ell/cuda_ell_rules.hpp"
#include "kernels/formats/cuda_ell/ell_layout.hpp"

namespace spmvd {
namespace {

template <typename Value>
class CudaEllOperator final : public SpmvOperator {
 public:
  CudaEllOperator(const SellLayout<Value>& ell, const LaunchConfig& launch, Device& device)
      : rows_(ell.rows),
        width_(ell_width(ell)),
        launch_(launch),
        stream_(static_cast<cudaStream_t>(device.native_stream())),
        col_indices_(upload(device, ell.col_indices.data(), ell.col_indices.size())),
        values_(upload(device, ell.values.data(), ell.values.size())) {}

  void apply(const void* x, void* y, double alpha, double beta) override {
    if (rows_ == 0) return;
    catalogue_detail::ell_kernel<Value><<<launch_.grid_size, launch_.block_size, 0, stream_>>>(
        rows_, width_, col_indices_.as<const std::int32_t>(), values_.as<const Value>(),
        static_cast<const Value*>(x), static_cast<Value*>(y), static_cast<Value>(alpha),
        static_cast<Value>(beta));
    SPMVD_CUDA_CHECK_LAUNCH();
  }

  Precision precision() const noexcept override { return precision_of<Value>(); }
  std::size_t device_bytes() const noexcept override {
    return col_indices_.bytes() + values_.bytes();
  }

 private:
  std::int64_t rows_;
  std::int64_t width_;
  LaunchConfig launch_;
  cudaStream_t stream_;
  DeviceBuffer col_indices_;
  DeviceBuffer values_;
};

template <typename Value>
std::unique_ptr<SpmvOperator> build_as(const CsrMatrix<double>& matrix, const Candidate& candidate,
                                       Device& device) {
  const SellLayout<Value> ell = make_ell_layout<Value>(matrix);
  const std::uint32_t width = CudaEllRules::params_of(candidate).ell_width;
  if (ell_width(ell) != width)
    throw_invalid("cuda_ell: candidate ell_width " + std::to_string(width) +
                  " differs from the matrix's longest row, " + std::to_string(ell_width(ell)));
  return std::make_unique<CudaEllOperator<Value>>(ell, candidate.launch, device);
}

}  // namespace

std::unique_ptr<SpmvOperator> CudaEllRules::build(const CsrMatrix<double>& matrix,
                                                  Precision precision, const Candidate& candidate,
                                                  Device& device) {
  check_candidate_format("cuda_ell", kCudaEllFormatId, candidate);
  check_one_of("cuda_ell", "block_size", candidate.launch.block_size, kEllBlockSizes);
  if (candidate.launch.grid_size == 0) throw_invalid("cuda_ell: grid_size is 0");
  check_gpu_device("cuda_ell", device);
  if (precision == Precision::fp32) return build_as<float>(matrix, candidate, device);
  return build_as<double>(matrix, candidate, device);
}

}  // namespace spmvd
