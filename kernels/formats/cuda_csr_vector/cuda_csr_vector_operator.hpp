#pragma once
// Builds cuda_csr_vector (cuda_csr_vector_rules.hpp) on a CUDA device: int64 row offsets,
// int32 column indices and the values (converted to `precision`) copied to the device once;
// apply() launches the kernel variant for the candidate's threads_per_row on the device stream.

#include <memory>

#include "core/csr_matrix.hpp"
#include "kernels/candidate.hpp"
#include "kernels/device.hpp"
#include "kernels/spmv_operator.hpp"

namespace spmvd {

// Throws Error(invalid_argument) when the candidate is not a compiled variant of this format
// (threads_per_row, block_size) or has grid_size 0, Error(failed_precondition) on a CPU device,
// Error(resource_exhausted) when device memory runs out.
std::unique_ptr<SpmvOperator> build_cuda_csr_vector(const CsrMatrix<double>& matrix,
                                                    Precision precision, const Candidate& candidate,
                                                    Device& device);

}  // namespace spmvd
