#include "core/structure_features.hpp"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <numeric>
#include <utility>
#include <vector>

#include <tbb/blocked_range.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_reduce.h>
#include <tbb/parallel_sort.h>
#include <tbb/partitioner.h>
#include <tbb/task_arena.h>

namespace spmvd {

namespace {

// Ranges of groups holding about equal numbers of non-zeros, at least one group each: the
// tasks of a gather count. Split by group count instead, a length-sorted order puts all of a
// power-law matrix's long rows in the first task, which then runs alone (H100 host, R-MAT
// scale 18: cuda_sell's hook, three sorted counts, took 15x the unsorted count; split by
// non-zeros, half its time, bench/feature_timing, docs/TUNER.md "Feature effort").
template <typename Value, typename RowAt>
std::vector<std::int64_t> nonzero_balanced_group_ranges(const CsrMatrix<Value>& m,
                                                        std::int64_t groups, RowAt row_at) {
  std::vector<std::int64_t> group_nnz(static_cast<std::size_t>(groups));
  tbb::parallel_for(tbb::blocked_range<std::int64_t>(0, groups, 1024),
                    [&](const tbb::blocked_range<std::int64_t>& range) {
                      for (std::int64_t g = range.begin(); g < range.end(); ++g) {
                        const std::int64_t first = g * kXGatherGroupRows;
                        const std::int64_t last = std::min(first + kXGatherGroupRows, m.rows);
                        std::int64_t nnz = 0;
                        for (std::int64_t i = first; i < last; ++i) nnz += m.row_length(row_at(i));
                        group_nnz[static_cast<std::size_t>(g)] = nnz;
                      }
                    });
  // Enough ranges for stealing to even out what the non-zeros do not predict (cache misses),
  // none smaller than a few thousand non-zeros (a task's set-up).
  const auto tasks = static_cast<std::int64_t>(16 * tbb::this_task_arena::max_concurrency());
  const std::int64_t per_range = std::max<std::int64_t>(m.nnz() / tasks, 4096);
  std::vector<std::int64_t> bounds{0};
  std::int64_t in_range = 0;
  for (std::int64_t g = 0; g < groups; ++g) {
    in_range += group_nnz[static_cast<std::size_t>(g)];
    if (in_range >= per_range) {
      bounds.push_back(g + 1);
      in_range = 0;
    }
  }
  if (bounds.back() != groups) bounds.push_back(groups);
  return bounds;
}

}  // namespace

template <typename Value>
double x_sectors_per_nonzero(const CsrMatrix<Value>& m, std::span<const std::int32_t> order) {
  if (m.nnz() == 0) return 0.0;
  // A bit per sector, set as a group first touches it and cleared after the group: O(nnz),
  // and the bitmap (cols / 64 bytes) stays in cache. Groups are independent, so ranges of
  // them are counted in parallel, each task with its own bitmap (the sum does not depend on
  // how the groups are split).
  const auto sectors_of_x =
      static_cast<std::size_t>((m.cols + kXSectorColumns - 1) / kXSectorColumns);
  const auto row_at = [&](std::int64_t i) -> std::int64_t {
    return order.empty() ? i : order[static_cast<std::size_t>(i)];
  };
  const std::int64_t groups = (m.rows + kXGatherGroupRows - 1) / kXGatherGroupRows;
  const std::vector<std::int64_t> bounds = nonzero_balanced_group_ranges(m, groups, row_at);
  tbb::enumerable_thread_specific<std::vector<std::uint64_t>> bitmaps(
      [&] { return std::vector<std::uint64_t>((sectors_of_x + 63) / 64, 0); });
  const std::int64_t sectors = tbb::parallel_reduce(
      tbb::blocked_range<std::size_t>(0, bounds.size() - 1, 1), std::int64_t{0},
      [&](const tbb::blocked_range<std::size_t>& ranges, std::int64_t sum) {
        std::vector<std::uint64_t>& touched = bitmaps.local();
        std::vector<std::size_t> touched_in_group;
        for (std::int64_t g = bounds[ranges.begin()]; g < bounds[ranges.end()]; ++g) {
          const std::int64_t first = g * kXGatherGroupRows;
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
          sum += static_cast<std::int64_t>(touched_in_group.size());
          for (const std::size_t sector : touched_in_group) touched[sector / 64] = 0;
          touched_in_group.clear();
        }
        return sum;
      },
      std::plus<>(), tbb::simple_partitioner());
  return static_cast<double>(sectors) / static_cast<double>(m.nnz());
}

template <typename Value>
double x_sectors_per_nonzero(const CsrMatrix<Value>& m) {
  return x_sectors_per_nonzero(m, std::span<const std::int32_t>{});
}

namespace {

// A row's place in a descending sort by length, its index breaking ties: unique, so any sort
// of the keys is the stable sort of the rows (rows and lengths below 2^32).
std::uint64_t descending_length_key(std::int64_t length, std::int64_t row) {
  return (static_cast<std::uint64_t>(std::numeric_limits<std::uint32_t>::max() -
                                     static_cast<std::uint32_t>(length))
          << 32) |
         static_cast<std::uint32_t>(row);
}

// The whole matrix by length, longest first, each length's rows in order: a counting sort
// over chunks of rows in parallel (a chunk's rows of one rank go after the earlier chunks' of
// that rank), O(rows + chunks * longest row). Where the counters would outnumber the rows (a
// few very long rows), the keys are sorted instead.
template <typename Value>
void sort_whole_matrix_by_length(const CsrMatrix<Value>& m, std::vector<std::int32_t>& order) {
  const std::int64_t longest = tbb::parallel_reduce(
      tbb::blocked_range<std::int64_t>(0, m.rows, 1 << 15), std::int64_t{0},
      [&](const tbb::blocked_range<std::int64_t>& range, std::int64_t l) {
        for (std::int64_t r = range.begin(); r < range.end(); ++r) l = std::max(l, m.row_length(r));
        return l;
      },
      [](std::int64_t a, std::int64_t b) { return std::max(a, b); });
  const auto ranks = static_cast<std::size_t>(longest) + 1;  // rank 0: the longest rows
  const auto rank = [&](std::int64_t r) {
    return static_cast<std::size_t>(longest - m.row_length(r));
  };
  const std::int64_t chunks =
      std::clamp<std::int64_t>(m.rows / (1 << 15), 1, 4 * tbb::this_task_arena::max_concurrency());
  if (static_cast<std::int64_t>(ranks) * chunks > m.rows + (1 << 16)) {
    std::vector<std::uint64_t> keys(static_cast<std::size_t>(m.rows));
    tbb::parallel_for(std::int64_t{0}, m.rows, [&](std::int64_t r) {
      keys[static_cast<std::size_t>(r)] = descending_length_key(m.row_length(r), r);
    });
    tbb::parallel_sort(keys.begin(), keys.end());
    tbb::parallel_for(std::size_t{0}, keys.size(), [&](std::size_t i) {
      order[i] = static_cast<std::int32_t>(keys[i] & 0xffffffffU);
    });
    return;
  }
  const auto chunk_rows = [&](std::int64_t c) {
    return std::pair{c * m.rows / chunks, (c + 1) * m.rows / chunks};
  };
  // next[c * ranks + k]: where chunk c's next row of rank k goes.
  std::vector<std::int64_t> next(static_cast<std::size_t>(chunks) * ranks, 0);
  tbb::parallel_for(std::int64_t{0}, chunks, [&](std::int64_t c) {
    std::int64_t* counts = next.data() + static_cast<std::size_t>(c) * ranks;
    const auto [first, last] = chunk_rows(c);
    for (std::int64_t r = first; r < last; ++r) ++counts[rank(r)];
  });
  std::int64_t placed = 0;
  for (std::size_t k = 0; k < ranks; ++k)
    for (std::int64_t c = 0; c < chunks; ++c) {
      std::int64_t& slot = next[static_cast<std::size_t>(c) * ranks + k];
      const std::int64_t count = slot;
      slot = placed;
      placed += count;
    }
  tbb::parallel_for(std::int64_t{0}, chunks, [&](std::int64_t c) {
    std::int64_t* at = next.data() + static_cast<std::size_t>(c) * ranks;
    const auto [first, last] = chunk_rows(c);
    for (std::int64_t r = first; r < last; ++r)
      order[static_cast<std::size_t>(at[rank(r)]++)] = static_cast<std::int32_t>(r);
  });
}

}  // namespace

template <typename Value>
std::vector<std::int32_t> length_sorted_row_order(const CsrMatrix<Value>& m,
                                                  std::int64_t sort_window) {
  std::vector<std::int32_t> order(static_cast<std::size_t>(m.rows));
  if (sort_window >= m.rows && m.rows > 0) {
    sort_whole_matrix_by_length(m, order);
    return order;
  }
  std::iota(order.begin(), order.end(), 0);
  if (sort_window <= 1) return order;
  // Windows are sorted independently: in parallel (the same order whatever the split), each
  // by its rows' keys (no comparison reads the row offsets again).
  const std::int64_t windows = (m.rows + sort_window - 1) / sort_window;
  tbb::enumerable_thread_specific<std::vector<std::uint64_t>> buffers;
  tbb::parallel_for(std::int64_t{0}, windows, [&](std::int64_t w) {
    const std::int64_t begin = w * sort_window;
    const std::int64_t end = std::min(m.rows, begin + sort_window);
    std::vector<std::uint64_t>& keys = buffers.local();
    keys.clear();
    for (std::int64_t r = begin; r < end; ++r)
      keys.push_back(descending_length_key(m.row_length(r), r));
    std::sort(keys.begin(), keys.end());  // unique keys: already the stable order
    for (std::int64_t i = begin; i < end; ++i)
      order[static_cast<std::size_t>(i)] =
          static_cast<std::int32_t>(keys[static_cast<std::size_t>(i - begin)] & 0xffffffffU);
  });
  return order;
}

template double x_sectors_per_nonzero(const CsrMatrix<float>&);
template double x_sectors_per_nonzero(const CsrMatrix<double>&);
template double x_sectors_per_nonzero(const CsrMatrix<float>&, std::span<const std::int32_t>);
template double x_sectors_per_nonzero(const CsrMatrix<double>&, std::span<const std::int32_t>);
template std::vector<std::int32_t> length_sorted_row_order(const CsrMatrix<float>&, std::int64_t);
template std::vector<std::int32_t> length_sorted_row_order(const CsrMatrix<double>&, std::int64_t);

}  // namespace spmvd
