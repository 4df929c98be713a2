#pragma once
// Builds cpu_coo (cpu_coo_rules.hpp) on a CPU device: the COO arrays (common/coo_layout.hpp)
// copied into the device's (host) memory; apply() runs y = alpha*A*x + beta*y with oneTBB,
// synchronously, each task owning a row range.

#include <memory>

#include "core/csr_matrix.hpp"
#include "kernels/candidate.hpp"
#include "kernels/device.hpp"
#include "kernels/spmv_operator.hpp"

namespace spmvd {

// Throws Error(failed_precondition) on a GPU device, Error(invalid_argument) for a candidate of
// another format.
std::unique_ptr<SpmvOperator> build_cpu_coo(const CsrMatrix<double>& matrix, Precision precision,
                                            const Candidate& candidate, Device& device);

}  // namespace spmvd
