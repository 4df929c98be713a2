#pragma once
// Builds cuda_coo (cuda_coo_rules.hpp) on a CUDA device: the row-sorted COO arrays
// (common/coo_layout.hpp) copied once; apply() runs y = beta*y, then the segmented-reduction
// kernel (common/segmented_coo_kernel.cuh) on the device stream.

#include <memory>

#include "core/csr_matrix.hpp"
#include "kernels/candidate.hpp"
#include "kernels/device.hpp"
#include "kernels/spmv_operator.hpp"

namespace spmvd {

// Throws Error(invalid_argument) for a candidate of another format, a block size not in
// kCooBlockSizes or grid_size 0; Error(failed_precondition) on a CPU device;
// Error(resource_exhausted) when device memory runs out.
std::unique_ptr<SpmvOperator> build_cuda_coo(const CsrMatrix<double>& matrix, Precision precision,
                                             const Candidate& candidate, Device& device);

}  // namespace spmvd
