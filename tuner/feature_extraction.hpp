#pragma once
// Structural features of a CSR matrix (core/matrix_features.hpp): one pass over row_offsets
// plus one over the first/last column of each row, the row-group padding (O(rows) per group
// size) and the BSR block counts (O(nnz * b) per block size). No values read.

#include "core/csr_matrix.hpp"
#include "core/matrix_features.hpp"

namespace spmvd {

template <typename Value>
MatrixFeatures extract_features(const CsrMatrix<Value>& m);

}  // namespace spmvd
