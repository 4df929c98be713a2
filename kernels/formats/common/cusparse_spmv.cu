#include <string>

#include "kernels/cuda/cuda_check.cuh"
#include "kernels/cuda/host_log.hpp"
#include "kernels/formats/common/cusparse_spmv.cuh"

namespace spmvd::catalogue_detail {
namespace {

void warn_on_failure(cusparseStatus_t status, const char* call) noexcept {
  if (status == CUSPARSE_STATUS_SUCCESS) return;
  try {
    cuda_detail::log_warning(std::string("cuSPARSE: ") + call +
                             " failed: " + cusparseGetErrorName(status));
  } catch (...) {
    // Building the message can throw (bad_alloc); a destructor must not. The line is lost.
  }
}

struct DnVecDeleter {
  void operator()(cusparseConstDnVecDescr_t descr) const noexcept {
    warn_on_failure(cusparseDestroyDnVec(descr), "cusparseDestroyDnVec");
  }
};
using ConstDnVecPtr =
    std::unique_ptr<std::remove_pointer_t<cusparseConstDnVecDescr_t>, DnVecDeleter>;
using DnVecPtr = std::unique_ptr<std::remove_pointer_t<cusparseDnVecDescr_t>, DnVecDeleter>;

ConstDnVecPtr make_x(std::int64_t size, const void* x, cudaDataType type) {
  cusparseConstDnVecDescr_t descr = nullptr;
  SPMVD_CUSPARSE_CHECK(cusparseCreateConstDnVec(&descr, size, x, type));
  return ConstDnVecPtr(descr);
}

DnVecPtr make_y(std::int64_t size, void* y, cudaDataType type) {
  cusparseDnVecDescr_t descr = nullptr;
  SPMVD_CUSPARSE_CHECK(cusparseCreateDnVec(&descr, size, y, type));
  return DnVecPtr(descr);
}

}  // namespace

void CusparseHandleDeleter::operator()(cusparseHandle_t handle) const noexcept {
  warn_on_failure(cusparseDestroy(handle), "cusparseDestroy");
}
void CusparseSpMatDeleter::operator()(cusparseSpMatDescr_t descr) const noexcept {
  warn_on_failure(cusparseDestroySpMat(descr), "cusparseDestroySpMat");
}

CusparseSpmv::CusparseSpmv(Device& device, CusparseSpMatPtr matrix, std::int64_t x_size,
                           std::int64_t y_size, cudaDataType value_type,
                           cusparseSpMVAlg_t algorithm)
    : x_size_(x_size),
      y_size_(y_size),
      value_type_(value_type),
      algorithm_(algorithm),
      matrix_(std::move(matrix)) {
  cusparseHandle_t handle = nullptr;
  SPMVD_CUSPARSE_CHECK(cusparseCreate(&handle));
  handle_.reset(handle);
  SPMVD_CUSPARSE_CHECK(
      cusparseSetStream(handle, static_cast<cudaStream_t>(device.native_stream())));

  // Sizing the workspace needs vector descriptors over real storage; these scratch vectors live
  // only for the build.
  const std::size_t value_size = value_type == CUDA_R_32F ? 4 : 8;
  const DeviceBuffer x(device, static_cast<std::size_t>(x_size) * value_size);
  const DeviceBuffer y(device, static_cast<std::size_t>(y_size) * value_size);
  const ConstDnVecPtr x_descr = make_x(x_size, x.data(), value_type);
  const DnVecPtr y_descr = make_y(y_size, y.data(), value_type);
  const double one_double = 1, zero_double = 0;
  const float one_float = 1, zero_float = 0;
  const void* one = value_type == CUDA_R_32F ? static_cast<const void*>(&one_float) : &one_double;
  const void* zero =
      value_type == CUDA_R_32F ? static_cast<const void*>(&zero_float) : &zero_double;
  std::size_t workspace_bytes = 0;
  SPMVD_CUSPARSE_CHECK(cusparseSpMV_bufferSize(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, one,
                                               matrix_.get(), x_descr.get(), zero, y_descr.get(),
                                               value_type, algorithm, &workspace_bytes));
  workspace_ = DeviceBuffer(device, workspace_bytes);
}

void CusparseSpmv::run(const void* x, void* y, const void* alpha, const void* beta) const {
  // Vector descriptors are host-side structs: creating them per call costs no device work.
  const ConstDnVecPtr x_descr = make_x(x_size_, x, value_type_);
  const DnVecPtr y_descr = make_y(y_size_, y, value_type_);
  SPMVD_CUSPARSE_CHECK(cusparseSpMV(handle_.get(), CUSPARSE_OPERATION_NON_TRANSPOSE, alpha,
                                    matrix_.get(), x_descr.get(), beta, y_descr.get(), value_type_,
                                    algorithm_, workspace_.data()));
}

}  // namespace spmvd::catalogue_detail
