#pragma once
// One cuSPARSE generic SpMV set up once per built matrix (cusparse_coo, cusparse_sell,
// cusparse_bsr): a handle bound to the device's stream, the sparse matrix descriptor, and the
// workspace, sized at build with scratch vectors and allocated once. run() is one cusparseSpMV.
// CusparseOperator is the whole operator of the formats that are nothing more (COO, SELL).

#include <cuda_runtime.h>
#include <cusparse.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/csr_matrix.hpp"
#include "core/precision.hpp"
#include "kernels/device.hpp"
#include "kernels/formats/common/spmv_device.cuh"
#include "kernels/spmv_operator.hpp"

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

// The operator of a cuSPARSE format whose multiply is one cusparseSpMV over arrays made at
// build. The derived constructor keeps its own arrays (keep) and holds shared ones (hold) and,
// where the matrix has work, hands start the descriptor over them; a shape without work is never handed to cuSPARSE: y = beta*y
// is all there is.
template <typename Value>
class CusparseOperator : public SpmvOperator {
 public:
  void apply(const void* x, void* y, double alpha_in, double beta_in) override {
    const auto alpha = static_cast<Value>(alpha_in), beta = static_cast<Value>(beta_in);
    if (!spmv_) return launch_scale(rows_, static_cast<Value*>(y), beta, stream_);
    spmv_->run(x, y, &alpha, &beta);
  }

  Precision precision() const noexcept override { return precision_of<Value>(); }
  std::size_t device_bytes() const noexcept override {
    std::size_t bytes = (spmv_ ? spmv_->workspace_bytes() : 0) + shared_bytes_;
    for (const DeviceBuffer& array : arrays_) bytes += array.bytes();
    return bytes;
  }

 protected:
  CusparseOperator(const CsrMatrix<double>& m, Device& device)
      : rows_(m.rows), cols_(m.cols), stream_(static_cast<cudaStream_t>(device.native_stream())) {}

  static bool has_work(const CsrMatrix<double>& m) noexcept {
    return m.rows != 0 && m.cols != 0 && m.nnz() != 0;
  }
  // Keeps a device array for the operator's lifetime; returns its address for the descriptor.
  void* keep(DeviceBuffer array) {
    arrays_.push_back(std::move(array));
    return arrays_.back().data();
  }
  // Keeps arrays shared with other operators of the matrix (the source's device CSR, a shared
  // layout: kernels/build_source.hpp) for the operator's lifetime; `bytes` of them are the
  // operator's own arrays in device_bytes().
  void hold(std::shared_ptr<const void> shared, std::size_t bytes) {
    shared_.push_back(std::move(shared));
    shared_bytes_ += bytes;
  }
  void start(Device& device, cusparseSpMatDescr_t descr, cusparseSpMVAlg_t algorithm) {
    spmv_.emplace(device, CusparseSpMatPtr(descr), cols_, rows_, cuda_value_type<Value>(),
                  algorithm);
  }

 private:
  std::int64_t rows_;
  std::int64_t cols_;
  cudaStream_t stream_;
  std::vector<DeviceBuffer> arrays_;
  std::vector<std::shared_ptr<const void>> shared_;
  std::size_t shared_bytes_ = 0;
  std::optional<CusparseSpmv> spmv_;  // declared last: destroyed first
};

}  // namespace spmvd::catalogue_detail
