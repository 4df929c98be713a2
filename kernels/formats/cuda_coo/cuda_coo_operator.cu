#include "core/error.hpp"
#include "kernels/cuda/cuda_check.cuh"
#include "kernels/formats/common/builder_checks.hpp"
#include "kernels/formats/common/coo_layout.hpp"
#include "kernels/formats/common/segmented_coo_kernel.cuh"
#include "kernels/formats/common/spmv_device.cuh"
#include "kernels/formats/cuda_coo/cuda_coo_rules.hpp"

namespace spmvd {
namespace {

template <typename Value>
class CudaCooOperator final : public SpmvOperator {
 public:
  CudaCooOperator(const CsrMatrix<double>& m, const LaunchConfig& launch, Device& device)
      : rows_(m.rows),
        nnz_(m.nnz()),
        launch_(launch),
        stream_(static_cast<cudaStream_t>(device.native_stream())) {
    const CooLayout<Value> coo = make_coo_layout<Value>(m);
    row_indices_ = upload(device, coo.row_indices.data(), coo.row_indices.size());
    col_indices_ = upload(device, coo.col_indices.data(), coo.col_indices.size());
    values_ = upload(device, coo.values.data(), coo.values.size());
  }

  void apply(const void* x, void* y_raw, double alpha, double beta) override {
    auto* y = static_cast<Value*>(y_raw);
    catalogue_detail::launch_scale(rows_, y, static_cast<Value>(beta), stream_);
    catalogue_detail::launch_coo_segmented(
        nnz_, row_indices_.as<const std::int32_t>(), col_indices_.as<const std::int32_t>(),
        values_.as<const Value>(), static_cast<const Value*>(x), y, static_cast<Value>(alpha),
        launch_.grid_size, launch_.block_size, stream_);
  }

  Precision precision() const noexcept override { return precision_of<Value>(); }
  std::size_t device_bytes() const noexcept override {
    return row_indices_.bytes() + col_indices_.bytes() + values_.bytes();
  }

 private:
  std::int64_t rows_;
  std::int64_t nnz_;
  LaunchConfig launch_;
  cudaStream_t stream_;
  DeviceBuffer row_indices_;
  DeviceBuffer col_indices_;
  DeviceBuffer values_;
};

}  // namespace

std::unique_ptr<SpmvOperator> CudaCooRules::build(const CsrMatrix<double>& matrix,
                                                  Precision precision, const Candidate& candidate,
                                                  Device& device) {
  check_candidate_format("cuda_coo", kCudaCooFormatId, candidate);
  check_one_of("cuda_coo", "block_size", candidate.launch.block_size, kCooBlockSizes);
  if (candidate.launch.grid_size == 0) throw_invalid("cuda_coo: grid_size is 0");
  check_gpu_device("cuda_coo", device);
  if (precision == Precision::fp32)
    return std::make_unique<CudaCooOperator<float>>(matrix, candidate.launch, device);
  return std::make_unique<CudaCooOperator<double>>(matrix, candidate.launch, device);
}

}  // namespace spmvd
