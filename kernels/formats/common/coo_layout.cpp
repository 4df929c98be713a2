#include "kernels/formats/common/coo_layout.hpp"

#include <string>

#include "core/error.hpp"

namespace spmvd {

template <typename Value>
CooLayout<Value> make_coo_layout(const CsrMatrix<double>& matrix) {
  if (matrix.rows > kMaxDimension)
    throw_invalid("coo layout: " + std::to_string(matrix.rows) +
                  " rows do not fit 32-bit row indices");
  CooLayout<Value> coo;
  coo.row_indices.reserve(static_cast<std::size_t>(matrix.nnz()));
  for (std::int64_t r = 0; r < matrix.rows; ++r)
    coo.row_indices.insert(coo.row_indices.end(), static_cast<std::size_t>(matrix.row_length(r)),
                           static_cast<std::int32_t>(r));
  coo.col_indices = matrix.col_indices;
  coo.values.assign(matrix.values.begin(), matrix.values.end());
  return coo;
}

template CooLayout<float> make_coo_layout(const CsrMatrix<double>&);
template CooLayout<double> make_coo_layout(const CsrMatrix<double>&);

}  // namespace spmvd
