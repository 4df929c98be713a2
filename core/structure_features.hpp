#pragma once
// The structural features that need more than row lengths (core/matrix_features.hpp): the
// slice padding of row groups (SELL) and the block counts of BSR. Shared by the tuner's
// feature extraction and the calibration's blocked samples, so that a calibration sample and a
// user's matrix are described by the same code.

#include <vector>

#include "core/csr_matrix.hpp"
#include "core/matrix_features.hpp"

namespace spmvd {

// One GroupPaddedDistribution per kFeatureGroupRows. O(rows) each.
template <typename Value>
std::vector<GroupPaddedDistribution> group_padded_distributions(const CsrMatrix<Value>& m);

// One BlockCount per kFeatureBlockDims: the b sorted rows of every block row merged into one
// run, counting distinct column / b. O(nnz * b) each, a buffer of one block row. Expects
// columns sorted within rows (validate()).
template <typename Value>
std::vector<BlockCount> block_counts(const CsrMatrix<Value>& m);

// MatrixFeatures::x_sectors_per_nonzero: per group of kXGatherGroupRows rows, its distinct
// columns / kXSectorColumns. O(nnz), a bitmap of cols / 64 bytes; 0 without non-zeros.
template <typename Value>
double x_sectors_per_nonzero(const CsrMatrix<Value>& m);

}  // namespace spmvd
