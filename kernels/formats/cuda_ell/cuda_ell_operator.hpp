#pragma once
// Builds cuda_ell (cuda_ell_rules.hpp) on a CUDA device: the column-major ELL arrays
// (ell_layout.hpp) copied once; apply() launches one thread per row on the device stream.

#include <memory>

#include "core/csr_matrix.hpp"
#include "kernels/candidate.hpp"
#include "kernels/device.hpp"
#include "kernels/spmv_operator.hpp"

namespace spmvd {

// Throws Error(invalid_argument) for a candidate of another format, a block size not in
// kEllBlockSizes, grid_size 0, or an ell_width other than the matrix's longest row;
// Error(failed_precondition) on a CPU device; Error(resource_exhausted) when memory runs out.
std::unique_ptr<SpmvOperator> build_cuda_ell(const CsrMatrix<double>& matrix, Precision precision,
                                             const Candidate& candidate, Device& device);

}  // namespace spmvd
