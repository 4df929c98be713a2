#include "kernels/formats/cuda_strip/strip_layout.hpp"

#include <limits>
#include <string>

#include "core/error.hpp"
#include "core/structure_features.hpp"
#include "kernels/formats/common/sell_layout.hpp"

namespace spmvd {

template <typename Value>
StripLayout<Value> make_strip_layout(const CsrMatrix<double>& m, std::int64_t separator) {
  if (separator < 0 || separator > m.rows)
    throw_invalid("cuda_strip: separator " + std::to_string(separator) + " is outside [0, " +
                  std::to_string(m.rows) + "]");
  if (m.rows > std::numeric_limits<std::int32_t>::max())
    throw_invalid("cuda_strip: " + std::to_string(m.rows) +
                  " rows do not fit the 32-bit permutation");
  StripLayout<Value> out;
  out.rows = m.rows;
  out.separator = separator;
  out.permutation = length_sorted_row_order(m, m.rows);

  out.csr_row_offsets.reserve(static_cast<std::size_t>(separator) + 1);
  out.csr_row_offsets.push_back(0);
  for (std::int64_t i = 0; i < separator; ++i) {
    const std::int64_t row = out.permutation[static_cast<std::size_t>(i)];
    for (RowOffset k = m.row_offsets[row]; k < m.row_offsets[row + 1]; ++k) {
      out.csr_col_indices.push_back(m.col_indices[static_cast<std::size_t>(k)]);
      out.csr_values.push_back(static_cast<Value>(m.values[static_cast<std::size_t>(k)]));
    }
    out.csr_row_offsets.push_back(static_cast<std::int64_t>(out.csr_col_indices.size()));
  }

  const std::int64_t ell_rows = out.ell_rows();
  out.ell_width = ell_rows > 0 ? m.row_length(out.permutation[static_cast<std::size_t>(separator)])
                               : 0;
  const auto slots = static_cast<std::size_t>(ell_rows * out.ell_width);
  out.ell_col_indices.assign(slots, kPaddingColumn);
  out.ell_values.assign(slots, Value(0));
  out.ell_lengths.resize(static_cast<std::size_t>(ell_rows));
  for (std::int64_t i = 0; i < ell_rows; ++i) {
    const std::int64_t row = out.permutation[static_cast<std::size_t>(separator + i)];
    out.ell_lengths[static_cast<std::size_t>(i)] = static_cast<std::int32_t>(m.row_length(row));
    std::int64_t slot = i;
    for (RowOffset k = m.row_offsets[row]; k < m.row_offsets[row + 1]; ++k, slot += ell_rows) {
      out.ell_col_indices[static_cast<std::size_t>(slot)] =
          m.col_indices[static_cast<std::size_t>(k)];
      out.ell_values[static_cast<std::size_t>(slot)] =
          static_cast<Value>(m.values[static_cast<std::size_t>(k)]);
    }
  }
  return out;
}

template StripLayout<float> make_strip_layout(const CsrMatrix<double>&, std::int64_t);
template StripLayout<double> make_strip_layout(const CsrMatrix<double>&, std::int64_t);

}  // namespace spmvd
