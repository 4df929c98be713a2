#pragma once
// Builds cusparse_coo (cusparse_coo_rules.hpp) on a CUDA device: the COO arrays
// (common/coo_layout.hpp) copied once, a cuSPARSE handle on the device stream, the COO
// descriptor and the SpMV workspace created once; apply() is one cusparseSpMV.

#include <memory>

#include "core/csr_matrix.hpp"
#include "kernels/candidate.hpp"
#include "kernels/device.hpp"
#include "kernels/spmv_operator.hpp"

namespace spmvd {

// Throws Error(invalid_argument) for a candidate of another format or an algorithm other than
// COO ALG1/ALG2, nnz >= 2^31; Error(failed_precondition) on a CPU device;
// Error(resource_exhausted) when device memory runs out.
std::unique_ptr<SpmvOperator> build_cusparse_coo(const CsrMatrix<double>& matrix,
                                                 Precision precision, const Candidate& candidate,
                                                 Device& device);

}  // namespace spmvd
