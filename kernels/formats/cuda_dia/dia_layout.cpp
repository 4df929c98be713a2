#include "kernels/formats/cuda_dia/dia_layout.hpp"

#include <algorithm>
#include <cstddef>

namespace spmvd {

template <typename Value>
DiaLayout<Value> make_dia_layout(const CsrMatrix<double>& m) {
  DiaLayout<Value> dia{.rows = m.rows, .offsets = {}, .values = {}};
  // The occupied offsets (column - row, shifted by rows - 1 into [0, rows + cols - 1)): a bit
  // each, then ascending; an entry finds its diagonal by binary search among them.
  std::vector<bool> occupied(static_cast<std::size_t>(m.rows + m.cols), false);
  const auto offset_of = [&](std::int64_t r, RowOffset k) {
    return static_cast<std::int64_t>(m.col_indices[static_cast<std::size_t>(k)]) - r;
  };
  for (std::int64_t r = 0; r < m.rows; ++r)
    for (RowOffset k = m.row_offsets[static_cast<std::size_t>(r)];
         k < m.row_offsets[static_cast<std::size_t>(r + 1)]; ++k)
      occupied[static_cast<std::size_t>(offset_of(r, k) + m.rows - 1)] = true;
  for (std::size_t slot = 0; slot < occupied.size(); ++slot) {
    if (!occupied[slot]) continue;
    dia.offsets.push_back(static_cast<std::int32_t>(static_cast<std::int64_t>(slot) - m.rows + 1));
  }
  const auto rows = static_cast<std::size_t>(m.rows);
  dia.values.assign(dia.offsets.size() * rows, Value(0));
  for (std::int64_t r = 0; r < m.rows; ++r)
    for (RowOffset k = m.row_offsets[static_cast<std::size_t>(r)];
         k < m.row_offsets[static_cast<std::size_t>(r + 1)]; ++k) {
      const auto d = static_cast<std::size_t>(
          std::lower_bound(dia.offsets.begin(), dia.offsets.end(), offset_of(r, k)) -
          dia.offsets.begin());
      // Duplicates were summed on upload; += keeps a sum either way.
      dia.values[d * rows + static_cast<std::size_t>(r)] +=
          static_cast<Value>(m.values[static_cast<std::size_t>(k)]);
    }
  return dia;
}

template DiaLayout<float> make_dia_layout(const CsrMatrix<double>&);
template DiaLayout<double> make_dia_layout(const CsrMatrix<double>&);

}  // namespace spmvd
