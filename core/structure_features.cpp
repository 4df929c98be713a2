#include "core/structure_features.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <numeric>
#include <set>
#include <vector>

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

template <typename Value>
double x_sectors_per_nonzero(const CsrMatrix<Value>& m, std::span<const std::int32_t> order) {
  if (m.nnz() == 0) return 0.0;
  // A bit per sector, set as a group first touches it and cleared after the group: O(nnz),
  // and the bitmap (cols / 64 bytes) stays in cache.
  const auto sectors_of_x =
      static_cast<std::size_t>((m.cols + kXSectorColumns - 1) / kXSectorColumns);
  std::vector<std::uint64_t> touched((sectors_of_x + 63) / 64, 0);
  std::vector<std::size_t> touched_in_group;
  std::int64_t sectors = 0;
  const auto row_at = [&](std::int64_t i) -> std::int64_t {
    return order.empty() ? i : order[static_cast<std::size_t>(i)];
  };
  for (std::int64_t first = 0; first < m.rows; first += kXGatherGroupRows) {
    const std::int64_t last = std::min(first + kXGatherGroupRows, m.rows);
    for (std::int64_t i = first; i < last; ++i) {
      const std::int64_t row = row_at(i);
      for (RowOffset k = m.row_offsets[static_cast<std::size_t>(row)];
           k < m.row_offsets[static_cast<std::size_t>(row + 1)]; ++k) {
        const auto sector = static_cast<std::size_t>(
            m.col_indices[static_cast<std::size_t>(k)] / kXSectorColumns);
        std::uint64_t& word = touched[sector / 64];
        const std::uint64_t bit = std::uint64_t{1} << (sector % 64);
        if ((word & bit) == 0) {
          word |= bit;
          touched_in_group.push_back(sector);
        }
      }
    }
    sectors += static_cast<std::int64_t>(touched_in_group.size());
    for (const std::size_t sector : touched_in_group) touched[sector / 64] = 0;
    touched_in_group.clear();
  }
  return static_cast<double>(sectors) / static_cast<double>(m.nnz());
}

template <typename Value>
double x_sectors_per_nonzero(const CsrMatrix<Value>& m) {
  return x_sectors_per_nonzero(m, std::span<const std::int32_t>{});
}

template <typename Value>
std::vector<std::int32_t> length_sorted_row_order(const CsrMatrix<Value>& m,
                                                  std::int64_t sort_window) {
  std::vector<std::int32_t> order(static_cast<std::size_t>(m.rows));
  if (sort_window >= m.rows && m.rows > 0) {
    // The whole matrix: a counting sort by length, longest first, each length's rows in order.
    std::int64_t longest = 0;
    for (std::int64_t r = 0; r < m.rows; ++r) longest = std::max(longest, m.row_length(r));
    // rank(r): 0 for the longest rows; next[k]: where the next row of rank k goes.
    const auto rank = [&](std::int64_t r) {
      return static_cast<std::size_t>(longest - m.row_length(r));
    };
    std::vector<std::int64_t> next(static_cast<std::size_t>(longest) + 2, 0);
    for (std::int64_t r = 0; r < m.rows; ++r) ++next[rank(r) + 1];
    for (std::size_t k = 1; k < next.size(); ++k) next[k] += next[k - 1];
    for (std::int64_t r = 0; r < m.rows; ++r)
      order[static_cast<std::size_t>(next[rank(r)]++)] = static_cast<std::int32_t>(r);
    return order;
  }
  std::iota(order.begin(), order.end(), 0);
  if (sort_window <= 1) return order;
  for (std::int64_t begin = 0; begin < m.rows; begin += sort_window) {
    const std::int64_t end = std::min(m.rows, begin + sort_window);
    std::stable_sort(order.begin() + begin, order.begin() + end,
                     [&](std::int32_t a, std::int32_t b) {
                       return m.row_length(a) > m.row_length(b);
                     });
  }
  return order;
}

template <typename Value>
std::vector<SortedGathers> sorted_gathers(const CsrMatrix<Value>& m, double unsorted_sectors) {
  std::set<std::int64_t> windows{m.rows};
  for (const std::int64_t w : kFeatureSortWindows) windows.insert(std::min(w, m.rows));
  bool one_length = true;
  for (std::int64_t r = 1; r < m.rows && one_length; ++r)
    one_length = m.row_length(r) == m.row_length(0);
  std::vector<SortedGathers> out;
  for (const std::int64_t window : windows) {
    if (window <= 1) continue;
    const double sectors =
        one_length ? unsorted_sectors
                   : x_sectors_per_nonzero(m, std::span<const std::int32_t>(
                                                  length_sorted_row_order(m, window)));
    out.push_back({.sort_window = window, .x_sectors_per_nonzero = sectors});
  }
  return out;
}

template std::vector<GroupPaddedDistribution> group_padded_distributions(const CsrMatrix<float>&);
template std::vector<GroupPaddedDistribution> group_padded_distributions(
    const CsrMatrix<double>&);
template std::vector<BlockCount> block_counts(const CsrMatrix<float>&);
template std::vector<BlockCount> block_counts(const CsrMatrix<double>&);
template double x_sectors_per_nonzero(const CsrMatrix<float>&);
template double x_sectors_per_nonzero(const CsrMatrix<double>&);
template double x_sectors_per_nonzero(const CsrMatrix<float>&, std::span<const std::int32_t>);
template double x_sectors_per_nonzero(const CsrMatrix<double>&, std::span<const std::int32_t>);
template std::vector<std::int32_t> length_sorted_row_order(const CsrMatrix<float>&, std::int64_t);
template std::vector<std::int32_t> length_sorted_row_order(const CsrMatrix<double>&, std::int64_t);
template std::vector<SortedGathers> sorted_gathers(const CsrMatrix<float>&, double);
template std::vector<SortedGathers> sorted_gathers(const CsrMatrix<double>&, double);

}  // namespace spmvd
