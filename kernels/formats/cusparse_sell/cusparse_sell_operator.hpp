#pragma once
// Builds cusparse_sell (cusparse_sell_rules.hpp) on a CUDA device: the unsorted sliced ELL
// arrays (common/sell_layout.hpp, cuSPARSE's padding convention) with 32-bit slice offsets
// copied once, a cuSPARSE handle on the device stream, the SELL descriptor and the SpMV
// workspace created once; apply() is one cusparseSpMV.

#include <memory>

#include "core/csr_matrix.hpp"
#include "kernels/candidate.hpp"
#include "kernels/device.hpp"
#include "kernels/spmv_operator.hpp"

namespace spmvd {

// Throws Error(invalid_argument) for a candidate of another format, a slice height not in
// kCusparseSellSliceHeights, an algorithm other than SELL ALG1, or more than 2^31 - 1 padded
// slots; Error(failed_precondition) on a CPU device; Error(resource_exhausted) when memory runs
// out.
std::unique_ptr<SpmvOperator> build_cusparse_sell(const CsrMatrix<double>& matrix,
                                                  Precision precision, const Candidate& candidate,
                                                  Device& device);

}  // namespace spmvd
