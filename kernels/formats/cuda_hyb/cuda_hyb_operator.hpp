#pragma once
// Builds cuda_hyb (cuda_hyb_rules.hpp) on a CUDA device: the ELL part and COO remainder of
// hyb_layout.hpp copied once; apply() runs the ELL kernel (y = alpha*A_ell*x + beta*y on every
// row), then the segmented COO kernel adds alpha*A_coo*x, both on the device stream.

#include <memory>

#include "core/csr_matrix.hpp"
#include "kernels/candidate.hpp"
#include "kernels/device.hpp"
#include "kernels/spmv_operator.hpp"

namespace spmvd {

// Throws Error(invalid_argument) for a candidate of another format, a block size not in
// kHybBlockSizes, grid_size 0, or an ell_width above the matrix's longest row;
// Error(failed_precondition) on a CPU device; Error(resource_exhausted) when memory runs out.
std::unique_ptr<SpmvOperator> build_cuda_hyb(const CsrMatrix<double>& matrix, Precision precision,
                                             const Candidate& candidate, Device& device);

}  // namespace spmvd
