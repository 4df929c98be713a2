#pragma once
// Host-side COO layout: the CSR entries in their CSR order (sorted by row, then column) with
// the row index of each entry spelled out. Used by cuda_coo, cuda_hyb's remainder, cusparse_coo
// and cpu_coo.

#include <cstdint>
#include <vector>

#include "core/csr_matrix.hpp"

namespace spmvd {

template <typename Value>
struct CooLayout {
  std::vector<std::int32_t> row_indices;  // nnz entries, non-decreasing
  std::vector<ColIndex> col_indices;      // nnz entries
  std::vector<Value> values;              // nnz entries, converted from double
};

// O(nnz). Throws Error(invalid_argument) when rows >= 2^31 (row indices are 32-bit).
template <typename Value>
CooLayout<Value> make_coo_layout(const CsrMatrix<double>& matrix);

}  // namespace spmvd
