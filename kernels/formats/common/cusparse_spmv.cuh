#pragma once
// One cuSPARSE generic SpMV set up once per built matrix (cusparse_coo, cusparse_sell,
// cusparse_bsr): a handle bound to the device's stream, the sparse matrix descriptor, and the
// workspace, sized at build with scratch vectors and allocated once. run() is one cusparseSpMV.

#include <cuda_runtime.h>
#include <cusparse.h>

#include <cstdint>
#include <memory>
#include <type_traits>

#include "kernels/device.hpp"

namespace spmvd::catalogue_detail {

struct CusparseHandleDeleter {
  void operator()(cusparseHandle_t handle) const noexcept;
};
struct CusparseSpMatDeleter {
  void operator()(cusparseSpMatDescr_t descr) const noexcept;
};
using CusparseHandlePtr =
    std::unique_ptr<std::remove_pointer_t<cusparseHandle_t>, CusparseHandleDeleter>;
using CusparseSpMatPtr =
    std::unique_ptr<std::remove_pointer_t<cusparseSpMatDescr_t>, CusparseSpMatDeleter>;

template <typename Value>
constexpr cudaDataType cuda_value_type() {
  return std::is_same_v<Value, float> ? CUDA_R_32F : CUDA_R_64F;
}

class CusparseSpmv {
 public:
  // Takes ownership of `matrix` (a descriptor over device arrays that outlive this object) with
  // x_size columns and y_size rows. Throws through SPMVD_CUSPARSE_CHECK / SPMVD_CUDA_CHECK.
  CusparseSpmv(Device& device, CusparseSpMatPtr matrix, std::int64_t x_size, std::int64_t y_size,
               cudaDataType value_type, cusparseSpMVAlg_t algorithm);

  // y = alpha*A*x + beta*y on the device stream; alpha and beta point to host values of the
  // matrix's value type.
  void run(const void* x, void* y, const void* alpha, const void* beta) const;

  std::size_t workspace_bytes() const noexcept { return workspace_.bytes(); }

 private:
  std::int64_t x_size_;
  std::int64_t y_size_;
  cudaDataType value_type_;
  cusparseSpMVAlg_t algorithm_;
  CusparseHandlePtr handle_;
  CusparseSpMatPtr matrix_;
  DeviceBuffer workspace_;
};

}  // namespace spmvd::catalogue_detail
