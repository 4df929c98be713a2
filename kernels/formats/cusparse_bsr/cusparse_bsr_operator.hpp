#pragma once
// Builds cusparse_bsr (cusparse_bsr_rules.hpp) on a CUDA device: the BSR arrays built on the host
// (bsr_layout.hpp) copied once, a cuSPARSE handle on the device stream, the BSR descriptor and
// the SpMV workspace created once. cuSPARSE reads x and writes y in whole blocks, so when rows
// or cols is not a multiple of block_dim, apply() stages x and y through padded device copies.

#include <memory>

#include "core/csr_matrix.hpp"
#include "kernels/candidate.hpp"
#include "kernels/device.hpp"
#include "kernels/spmv_operator.hpp"

namespace spmvd {

// Throws Error(invalid_argument) for a candidate of another format, a block_dim not in
// kBsrBlockDims, an algorithm other than BSR ALG1, or more than 2^31 - 1 blocks;
// Error(failed_precondition) on a CPU device; Error(resource_exhausted) when memory runs out.
std::unique_ptr<SpmvOperator> build_cusparse_bsr(const CsrMatrix<double>& matrix,
                                                 Precision precision, const Candidate& candidate,
                                                 Device& device);

}  // namespace spmvd
