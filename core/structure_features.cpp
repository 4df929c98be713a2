#include "core/structure_features.hpp"

#include <algorithm>
#include <limits>
#include <map>

namespace spmvd {

template <typename Value>
std::vector<GroupPaddedDistribution> group_padded_distributions(const CsrMatrix<Value>& m) {
  std::vector<GroupPaddedDistribution> out;
  for (const std::int64_t g : kFeatureGroupRows) {
    std::map<std::int64_t, std::int64_t> rows_by_length;
    for (std::int64_t first = 0; first < m.rows; first += g) {
      const std::int64_t last = std::min(first + g, m.rows);
      std::int64_t longest = 0;
      for (std::int64_t r = first; r < last; ++r) longest = std::max(longest, m.row_length(r));
      rows_by_length[longest] += last - first;
    }
    GroupPaddedDistribution d{.group_rows = g, .distribution = {}};
    d.distribution.reserve(rows_by_length.size());
    for (const auto& [length, rows] : rows_by_length) d.distribution.push_back({length, rows});
    out.push_back(std::move(d));
  }
  return out;
}

template <typename Value>
std::vector<BlockCount> block_counts(const CsrMatrix<Value>& m) {
  std::vector<BlockCount> out;
  for (const std::int64_t b : kFeatureBlockDims) {
    std::int64_t blocks = 0;
    std::vector<RowOffset> cursor(static_cast<std::size_t>(b)), end(static_cast<std::size_t>(b));
    for (std::int64_t first = 0; first < m.rows; first += b) {
      const std::int64_t n = std::min(b, m.rows - first);
      for (std::int64_t i = 0; i < n; ++i) {
        cursor[static_cast<std::size_t>(i)] = m.row_offsets[static_cast<std::size_t>(first + i)];
        end[static_cast<std::size_t>(i)] = m.row_offsets[static_cast<std::size_t>(first + i + 1)];
      }
      // Repeatedly take the smallest block column among the rows' next entries, count it, and
      // step every row past that block column.
      while (true) {
        std::int64_t block_col = std::numeric_limits<std::int64_t>::max();
        for (std::int64_t i = 0; i < n; ++i) {
          const auto k = static_cast<std::size_t>(i);
          if (cursor[k] < end[k])
            block_col = std::min<std::int64_t>(
                block_col, m.col_indices[static_cast<std::size_t>(cursor[k])] / b);
        }
        if (block_col == std::numeric_limits<std::int64_t>::max()) break;
        ++blocks;
        for (std::int64_t i = 0; i < n; ++i) {
          const auto k = static_cast<std::size_t>(i);
          while (cursor[k] < end[k] &&
                 m.col_indices[static_cast<std::size_t>(cursor[k])] / b == block_col)
            ++cursor[k];
        }
      }
    }
    out.push_back({.block_dim = b, .blocks = blocks});
  }
  return out;
}

template std::vector<GroupPaddedDistribution> group_padded_distributions(const CsrMatrix<float>&);
template std::vector<GroupPaddedDistribution> group_padded_distributions(
    const CsrMatrix<double>&);
template std::vector<BlockCount> block_counts(const CsrMatrix<float>&);
template std::vector<BlockCount> block_counts(const CsrMatrix<double>&);

}  // namespace spmvd
