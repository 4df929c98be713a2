#pragma once
// Structural features of a CSR matrix (core/matrix_features.hpp): one pass over row_offsets
// plus one over the first/last column of each row. O(rows), no values read.

#include "core/csr_matrix.hpp"
#include "core/matrix_features.hpp"

namespace spmvd {

template <typename Value>
MatrixFeatures extract_features(const CsrMatrix<Value>& m);

}  // namespace spmvd
