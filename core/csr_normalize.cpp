#include "core/csr_normalize.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <atomic>
#include <utility>
#include <vector>

namespace spmvd {
namespace {

bool strictly_increasing(const ColIndex* begin, const ColIndex* end) {
  return std::adjacent_find(begin, end, [](ColIndex a, ColIndex b) { return a >= b; }) == end;
}

// Sorts and merges one row inside its own slice; returns how many entries it keeps (a prefix).
RowOffset sort_and_merge_row(ColIndex* cols, double* vals, RowOffset length,
                             std::vector<std::pair<ColIndex, double>>& scratch) {
  scratch.clear();
  for (RowOffset k = 0; k < length; ++k) scratch.emplace_back(cols[k], vals[k]);
  std::stable_sort(scratch.begin(), scratch.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  RowOffset write = 0;
  for (std::size_t s = 0; s < scratch.size();) {
    const ColIndex c = scratch[s].first;
    double sum = scratch[s].second;
    for (++s; s < scratch.size() && scratch[s].first == c; ++s) sum += scratch[s].second;
    cols[write] = c;
    vals[write] = sum;
    ++write;
  }
  return write;
}

}  // namespace

NormalizeOutcome sort_rows_and_sum_duplicates(CsrMatrix<double>& m) {
  const auto rows = static_cast<std::size_t>(m.rows);
  std::vector<RowOffset> kept(rows);
  std::atomic<std::int64_t> rows_sorted{0};
  // Rows of a few entries are the norm: grains of 4096 rows keep TBB's overhead negligible.
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, rows, 4096),
                    [&](const tbb::blocked_range<std::size_t>& range) {
                      std::vector<std::pair<ColIndex, double>> scratch;
                      std::int64_t sorted_here = 0;
                      for (std::size_t r = range.begin(); r != range.end(); ++r) {
                        const RowOffset begin = m.row_offsets[r], length = m.row_offsets[r + 1] - begin;
                        ColIndex* cols = m.col_indices.data() + begin;
                        double* vals = m.values.data() + begin;
                        if (strictly_increasing(cols, cols + length)) {
                          kept[r] = length;
                          continue;
                        }
                        kept[r] = sort_and_merge_row(cols, vals, length, scratch);
                        ++sorted_here;
                      }
                      rows_sorted += sorted_here;
                    });
  NormalizeOutcome outcome{rows_sorted.load(), 0};
  if (outcome.rows_sorted == 0) return outcome;

  std::vector<RowOffset> offsets(rows + 1, 0);
  for (std::size_t r = 0; r < rows; ++r) offsets[r + 1] = offsets[r] + kept[r];
  outcome.duplicates_summed = m.nnz() - offsets.back();
  if (outcome.duplicates_summed == 0) return outcome;  // sorted in place, nothing to compact

  std::vector<ColIndex> cols(static_cast<std::size_t>(offsets.back()));
  std::vector<double> vals(cols.size());
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, rows, 4096),
                    [&](const tbb::blocked_range<std::size_t>& range) {
                      for (std::size_t r = range.begin(); r != range.end(); ++r) {
                        const auto from = m.row_offsets[r];
                        std::copy_n(m.col_indices.begin() + from, kept[r], cols.begin() + offsets[r]);
                        std::copy_n(m.values.begin() + from, kept[r], vals.begin() + offsets[r]);
                      }
                    });
  m.row_offsets = std::move(offsets);
  m.col_indices = std::move(cols);
  m.values = std::move(vals);
  return outcome;
}

}  // namespace spmvd
