#pragma once
// Host-side HYB layout (Bell & Garland, SC'09, Sec. 3.5): the first ell_width entries of every
// row in a column-major ELL part (entry j of row r at j*rows + r, padding kPaddingColumn / 0),
// the entries beyond them in a row-sorted COO remainder.

#include <cstdint>
#include <vector>

#include "core/csr_matrix.hpp"
#include "kernels/formats/common/coo_layout.hpp"

namespace spmvd {

template <typename Value>
struct HybLayout {
  std::int64_t rows = 0;
  std::int64_t ell_width = 0;             // K
  std::vector<ColIndex> ell_col_indices;  // rows * K slots
  std::vector<Value> ell_values;          // rows * K slots
  CooLayout<Value> coo;                   // entries beyond K, row-sorted
};

// Throws Error(invalid_argument) for ell_width < 0 or rows >= 2^31.
template <typename Value>
HybLayout<Value> make_hyb_layout(const CsrMatrix<double>& matrix, std::int64_t ell_width);

}  // namespace spmvd
