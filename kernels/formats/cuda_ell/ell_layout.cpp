#include "kernels/formats/cuda_ell/ell_layout.hpp"

#include <algorithm>

namespace spmvd {

template <typename Value>
SellLayout<Value> make_ell_layout(const CsrMatrix<double>& matrix) {
  return make_sell_layout<Value>(matrix, std::max<std::int64_t>(matrix.rows, 1), 1);
}

template SellLayout<float> make_ell_layout(const CsrMatrix<double>&);
template SellLayout<double> make_ell_layout(const CsrMatrix<double>&);

}  // namespace spmvd
