#include "kernels/formats/cuda_hyb/hyb_layout.hpp"

#include <algorithm>
#include <string>

#include "core/error.hpp"
#include "kernels/formats/common/sell_layout.hpp"

namespace spmvd {

template <typename Value>
HybLayout<Value> make_hyb_layout(const CsrMatrix<double>& matrix, std::int64_t ell_width) {
  if (ell_width < 0) throw_invalid("hyb layout: ell_width " + std::to_string(ell_width) + " < 0");
  if (matrix.rows > kMaxDimension)
    throw_invalid("hyb layout: " + std::to_string(matrix.rows) +
                  " rows do not fit 32-bit row indices");
  HybLayout<Value> hyb;
  hyb.rows = matrix.rows;
  hyb.ell_width = ell_width;
  const auto slots = static_cast<std::size_t>(matrix.rows * ell_width);
  hyb.ell_col_indices.assign(slots, kPaddingColumn);
  hyb.ell_values.assign(slots, Value(0));
  for (std::int64_t r = 0; r < matrix.rows; ++r) {
    const RowOffset begin = matrix.row_offsets[r], end = matrix.row_offsets[r + 1];
    const RowOffset split = std::min<RowOffset>(end, begin + ell_width);
    for (RowOffset k = begin; k < split; ++k) {
      const std::int64_t slot = (k - begin) * matrix.rows + r;
      hyb.ell_col_indices[slot] = matrix.col_indices[k];
      hyb.ell_values[slot] = static_cast<Value>(matrix.values[k]);
    }
    for (RowOffset k = split; k < end; ++k) {
      hyb.coo.row_indices.push_back(static_cast<std::int32_t>(r));
      hyb.coo.col_indices.push_back(matrix.col_indices[k]);
      hyb.coo.values.push_back(static_cast<Value>(matrix.values[k]));
    }
  }
  return hyb;
}

template HybLayout<float> make_hyb_layout(const CsrMatrix<double>&, std::int64_t);
template HybLayout<double> make_hyb_layout(const CsrMatrix<double>&, std::int64_t);

}  // namespace spmvd
