#pragma once
// Builds cpu_csr (kernels/formats/cpu_csr/cpu_csr_rules.hpp) on a CPU device: the arrays are
// copied into the device's (host) memory and apply() runs y = alpha*A*x + beta*y with oneTBB,
// synchronously, on the calling thread and TBB's workers.

#include <memory>

#include "core/csr_matrix.hpp"
#include "kernels/candidate.hpp"
#include "kernels/device.hpp"
#include "kernels/spmv_operator.hpp"

namespace spmvd {

// Throws Error(failed_precondition) on a GPU device, Error(invalid_argument) for a candidate of
// another format.
std::unique_ptr<SpmvOperator> build_cpu_csr(const CsrMatrix<double>& matrix, Precision precision,
                                            const Candidate& candidate, Device& device);

}  // namespace spmvd
