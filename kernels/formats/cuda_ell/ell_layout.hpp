#pragma once
// Host-side ELL layout: one slice of every row (common/sell_layout.hpp), so width = the longest
// row and entry j of row r sits at j*rows + r; padding column kPaddingColumn, value 0.

#include <cstdint>

#include "core/csr_matrix.hpp"
#include "kernels/formats/common/sell_layout.hpp"

namespace spmvd {

template <typename Value>
SellLayout<Value> make_ell_layout(const CsrMatrix<double>& matrix);

// The layout's width: slots per row.
template <typename Value>
std::int64_t ell_width(const SellLayout<Value>& ell) {
  return ell.rows == 0 ? 0 : ell.slots() / ell.rows;
}

}  // namespace spmvd
