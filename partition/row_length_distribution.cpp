#include "partition/row_length_distribution.hpp"

#include <tbb/blocked_range.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "core/error.hpp"

namespace spmvd {
namespace {

// Rows shorter than this are counted in a dense array per thread (8 KiB of counters: stays in
// L1); longer rows are listed and sorted at the end. At most nnz / kDenseLengths rows can be
// that long, so the list is short whatever the matrix.
constexpr std::int64_t kDenseLengths = 1024;

// Rows per task: large enough that a task's bookkeeping is noise next to its loads.
constexpr std::size_t kRowsPerTask = 1 << 16;

struct ThreadHistogram {
  std::vector<std::int64_t> dense = std::vector<std::int64_t>(kDenseLengths, 0);
  std::vector<std::int64_t> long_lengths;
  std::int64_t first_bad_row = std::numeric_limits<std::int64_t>::max();
};

}  // namespace

RowLengthDistribution row_length_distribution(std::span<const std::int64_t> row_offsets) {
  if (row_offsets.empty()) {
    throw_invalid("row_length_distribution: row offsets are empty (need rows + 1 entries)");
  }
  const std::size_t rows = row_offsets.size() - 1;
  tbb::enumerable_thread_specific<ThreadHistogram> histograms;
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, rows, kRowsPerTask),
                    [&](const tbb::blocked_range<std::size_t>& range) {
                      ThreadHistogram& h = histograms.local();
                      for (std::size_t r = range.begin(); r != range.end(); ++r) {
                        const std::int64_t length = row_offsets[r + 1] - row_offsets[r];
                        if (length < kDenseLengths && length >= 0) {
                          ++h.dense[static_cast<std::size_t>(length)];
                        } else if (length >= kDenseLengths) {
                          h.long_lengths.push_back(length);
                        } else {
                          h.first_bad_row = std::min(h.first_bad_row, static_cast<std::int64_t>(r));
                        }
                      }
                    });

  std::vector<std::int64_t> dense(kDenseLengths, 0);
  std::vector<std::int64_t> long_lengths;
  std::int64_t first_bad_row = std::numeric_limits<std::int64_t>::max();
  for (const ThreadHistogram& h : histograms) {
    for (std::int64_t m = 0; m < kDenseLengths; ++m) dense[m] += h.dense[m];
    long_lengths.insert(long_lengths.end(), h.long_lengths.begin(), h.long_lengths.end());
    first_bad_row = std::min(first_bad_row, h.first_bad_row);
  }
  if (first_bad_row != std::numeric_limits<std::int64_t>::max()) {
    const auto r = static_cast<std::size_t>(first_bad_row);
    throw_invalid("row_length_distribution: row " + std::to_string(first_bad_row) +
                  ": row offset " + std::to_string(row_offsets[r + 1]) + " < " +
                  std::to_string(row_offsets[r]) + " (offsets must not decrease)");
  }

  RowLengthDistribution df;
  df.rows = static_cast<std::int64_t>(rows);
  df.empty_rows = dense[0];
  df.nnz = row_offsets.back() - row_offsets.front();
  for (std::int64_t m = 1; m < kDenseLengths; ++m) {
    if (dense[m] > 0) df.sets.push_back({m, dense[m]});
  }
  std::sort(long_lengths.begin(), long_lengths.end());
  for (std::size_t i = 0; i < long_lengths.size();) {
    std::size_t j = i;
    while (j < long_lengths.size() && long_lengths[j] == long_lengths[i]) ++j;
    df.sets.push_back({long_lengths[i], static_cast<std::int64_t>(j - i)});
    i = j;
  }
  return df;
}

MatrixFeatures distribution_features(const RowLengthDistribution& df, std::int64_t cols) {
  MatrixFeatures f;
  f.rows = df.rows;
  f.cols = cols;
  f.nnz = df.nnz;
  f.empty_rows = df.empty_rows;
  f.distribution = df.sets;
  if (df.rows == 0) return f;
  f.row_length_min = df.empty_rows > 0 || df.sets.empty() ? 0 : df.sets.front().length;
  f.row_length_max = df.sets.empty() ? 0 : df.sets.back().length;
  double sum = 0.0, sum_squares = 0.0;
  for (const RowLengthCount& set : df.sets) {
    const auto m = static_cast<double>(set.length);
    sum += m * static_cast<double>(set.rows);
    sum_squares += m * m * static_cast<double>(set.rows);
  }
  const auto n = static_cast<double>(df.rows);
  f.row_length_mean = sum / n;
  f.row_length_stddev =
      std::sqrt(std::max(0.0, sum_squares / n - f.row_length_mean * f.row_length_mean));
  return f;
}

}  // namespace spmvd
