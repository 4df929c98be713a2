#include <cuda_runtime.h>

#include "kernels/formats/common/segmented_coo_kernel.cuh"
#include "kernels/formats/common/spmv_device.cuh"
#include "kernels/formats/cuda_csr_vector/cuda_csr_vector_kernel.cuh"
#include "models/compiled_kernel_resources.hpp"

namespace spmvd {
namespace {

template <typename Kernel>
std::optional<KernelResources> attributes_of(Kernel* kernel, int threads_per_block) {
  cudaFuncAttributes attributes{};
  // Fails without a driver or GPU: calibration then falls back to its documented assumption.
  if (cudaFuncGetAttributes(&attributes, kernel) != cudaSuccess) {
    (void)cudaGetLastError();  // clear it, so the next checked CUDA call does not report it
    return std::nullopt;
  }
  return KernelResources{.threads_per_block = threads_per_block,
                         .registers_per_thread = attributes.numRegs,
                         .static_shared_bytes = attributes.sharedSizeBytes,
                         .dynamic_shared_bytes = 0};
}

template <typename Value>
std::optional<KernelResources> csr_vector_resources(int threads_per_row, int threads_per_block) {
  using namespace csr_vector_detail;
  switch (threads_per_row) {
    case 2:
      return attributes_of(csr_vector_kernel<Value, 2>, threads_per_block);
    case 4:
      return attributes_of(csr_vector_kernel<Value, 4>, threads_per_block);
    case 8:
      return attributes_of(csr_vector_kernel<Value, 8>, threads_per_block);
    case 16:
      return attributes_of(csr_vector_kernel<Value, 16>, threads_per_block);
    case 32:
      return attributes_of(csr_vector_kernel<Value, 32>, threads_per_block);
    default:
      return std::nullopt;
  }
}

template <typename Value>
std::optional<KernelResources> resources(CompiledKernel kernel, int threads_per_row,
                                         int threads_per_block) {
  switch (kernel) {
    case CompiledKernel::csr_vector:
      return csr_vector_resources<Value>(threads_per_row, threads_per_block);
    case CompiledKernel::ell:
      return attributes_of(catalogue_detail::ell_kernel<Value>, threads_per_block);
    case CompiledKernel::coo:
      return attributes_of(catalogue_detail::coo_segmented_kernel<Value>, threads_per_block);
  }
  return std::nullopt;
}

}  // namespace

std::optional<KernelResources> compiled_kernel_resources(CompiledKernel kernel, Precision precision,
                                                         int threads_per_row,
                                                         int threads_per_block) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    (void)cudaGetLastError();
    return std::nullopt;
  }
  return precision == Precision::fp32
             ? resources<float>(kernel, threads_per_row, threads_per_block)
             : resources<double>(kernel, threads_per_row, threads_per_block);
}

}  // namespace spmvd
