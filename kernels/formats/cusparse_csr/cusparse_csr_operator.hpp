#pragma once
// Builds cusparse_csr (cusparse_csr_rules.hpp) on a CUDA device. Build uploads the CSR arrays,
// creates a cuSPARSE handle bound to the device stream and the CSR descriptor, allocates the
// SpMV workspace once and runs cusparseSpMV_preprocess once; apply() is one cusparseSpMV.

#include <memory>

#include "core/csr_matrix.hpp"
#include "kernels/candidate.hpp"
#include "kernels/device.hpp"
#include "kernels/spmv_operator.hpp"

namespace spmvd {

// Throws Error(invalid_argument) for an algorithm other than CSR ALG1/ALG2,
// Error(failed_precondition) on a CPU device, Error(resource_exhausted) when memory runs out.
std::unique_ptr<SpmvOperator> build_cusparse_csr(const CsrMatrix<double>& matrix,
                                                 Precision precision, const Candidate& candidate,
                                                 Device& device);

}  // namespace spmvd
