#pragma once
// Builds cuda_csr_scalar (cuda_csr_scalar_rules.hpp) on a CUDA device: int64 row offsets, int32
// column indices and the values (converted to `precision`) copied to the device once; apply()
// launches one thread per row on the device stream.

#include <memory>

#include "core/csr_matrix.hpp"
#include "kernels/candidate.hpp"
#include "kernels/device.hpp"
#include "kernels/spmv_operator.hpp"

namespace spmvd {

// Throws Error(invalid_argument) for a candidate of another format, a block size not in
// kCsrScalarBlockSizes or grid_size 0; Error(failed_precondition) on a CPU device;
// Error(resource_exhausted) when device memory runs out.
std::unique_ptr<SpmvOperator> build_cuda_csr_scalar(const CsrMatrix<double>& matrix,
                                                    Precision precision, const Candidate& candidate,
                                                    Device& device);

}  // namespace spmvd
