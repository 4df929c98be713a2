#pragma once
// Builds cuda_sell (cuda_sell_rules.hpp) on a CUDA device: the SELL-C-sigma arrays and the row
// permutation (common/sell_layout.hpp) copied once; apply() launches one thread per sorted row,
// which writes its result to the caller's row (y[permutation[i]]), on the device stream.

#include <memory>

#include "core/csr_matrix.hpp"
#include "kernels/candidate.hpp"
#include "kernels/device.hpp"
#include "kernels/spmv_operator.hpp"

namespace spmvd {

// Throws Error(invalid_argument) for a candidate of another format, a slice height not in
// kSellSliceHeights, a block size not in kSellBlockSizes, sort_window 0 or grid_size 0;
// Error(failed_precondition) on a CPU device; Error(resource_exhausted) when memory runs out.
std::unique_ptr<SpmvOperator> build_cuda_sell(const CsrMatrix<double>& matrix, Precision precision,
                                              const Candidate& candidate, Device& device);

}  // namespace spmvd
