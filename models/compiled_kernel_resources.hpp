#pragma once
// Registers and static shared memory of the compiled kernels that calibration times, read from
// this binary with cudaFuncGetAttributes: paper 004 Sec. 4.2.1 reads "Registers / Thread" and
// "Shared Memory / Block" from the .cubin, and P (models/occupancy.hpp) depends on them.
//
// The kernels are templates in kernels/formats/**/*.cuh; compiled_kernel_resources.cu
// instantiates the same templates with the same nvcc flags and architecture, so the register
// count it reads is the one the format's own translation unit gets.

#include <optional>

#include "core/precision.hpp"
#include "models/occupancy.hpp"

namespace spmvd {

// The kernels whose templates live in headers (cuda_csr_scalar's lives in its .cu, so it is not
// here: see calibration.cpp for the assumption used for it).
enum class CompiledKernel {
  csr_vector,  // kernels/formats/cuda_csr_vector/cuda_csr_vector_kernel.cuh
  ell,         // kernels/formats/common/spmv_device.cuh, cuda_ell and cuda_hyb's ELL part
  coo,         // kernels/formats/common/segmented_coo_kernel.cuh, cuda_coo and cuda_hyb's COO
};

// KernelResources of `kernel` at `precision` launched with threads_per_block threads
// (threads_per_row selects the csr_vector variant: 2, 4, 8, 16 or 32; ignored otherwise).
// nullopt when built without CUDA, when no GPU is visible, or for a csr_vector variant that is
// not compiled. Dynamic shared bytes are 0: none of these kernels uses dynamic shared memory.
std::optional<KernelResources> compiled_kernel_resources(CompiledKernel kernel, Precision precision,
                                                         int threads_per_row,
                                                         int threads_per_block);

}  // namespace spmvd
