#include "core/structure_features.hpp"

#include <algorithm>
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
  std::vector<ColIndex> merged, scratch;
  for (const std::int64_t b : kFeatureBlockDims) {
    std::int64_t blocks = 0;
    for (std::int64_t first = 0; first < m.rows; first += b) {
      const std::int64_t last = std::min(first + b, m.rows);
      // The block row's columns in one sorted run (its rows are sorted), then its distinct
      // column / b.
      const auto row = [&](std::int64_t r) {
        return std::pair{m.col_indices.begin() + m.row_offsets[static_cast<std::size_t>(r)],
                         m.col_indices.begin() + m.row_offsets[static_cast<std::size_t>(r + 1)]};
      };
      merged.assign(row(first).first, row(first).second);
      for (std::int64_t r = first + 1; r < last; ++r) {
        scratch.resize(merged.size() + static_cast<std::size_t>(m.row_length(r)));
        std::merge(merged.begin(), merged.end(), row(r).first, row(r).second, scratch.begin());
        merged.swap(scratch);
      }
      std::int64_t previous = -1;
      for (const ColIndex c : merged) {
        const std::int64_t block_col = c / b;
        blocks += block_col != previous;
        previous = block_col;
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
