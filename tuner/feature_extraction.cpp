#include "tuner/feature_extraction.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_reduce.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <vector>

#include "core/structure_features.hpp"
#include "kernels/format_registry.hpp"
#include "partition/row_length_distribution.hpp"

namespace spmvd {

namespace {

// The row-length moments and column spans of common_features, summed as integers (exact, so
// the same whatever the split) over ranges of rows in parallel: one core walking the rows was
// half of the common features of a 20M-nonzero stencil (2-core build host, 2026-11-24).
struct RowStatistics {
  std::int64_t shortest = std::numeric_limits<std::int64_t>::max();
  std::int64_t longest = 0;
  std::int64_t length_sum = 0;
  // Below 2^64 for fewer than 2^33 non-zeros: a row is at most 2^31 columns long (32-bit
  // column indices), so the squares sum to at most nnz * 2^31 and the spans to rows * 2^31.
  std::uint64_t length_squares_sum = 0;
  std::uint64_t span_sum = 0;

  void join(const RowStatistics& other) {
    shortest = std::min(shortest, other.shortest);
    longest = std::max(longest, other.longest);
    length_sum += other.length_sum;
    length_squares_sum += other.length_squares_sum;
    span_sum += other.span_sum;
  }
};

RowStatistics row_statistics(const CsrMatrix<double>& m) {
  return tbb::parallel_reduce(
      tbb::blocked_range<std::int64_t>(0, m.rows, 1 << 15), RowStatistics{},
      [&](const tbb::blocked_range<std::int64_t>& range, RowStatistics stats) {
        for (std::int64_t r = range.begin(); r < range.end(); ++r) {
          const std::int64_t length = m.row_length(r);
          stats.shortest = std::min(stats.shortest, length);
          stats.longest = std::max(stats.longest, length);
          stats.length_sum += length;
          stats.length_squares_sum +=
              static_cast<std::uint64_t>(length) * static_cast<std::uint64_t>(length);
          if (length == 0) continue;
          // Columns are sorted within a row (validate()), so the span is last - first + 1.
          const auto first = m.col_indices[static_cast<std::size_t>(m.row_offsets[r])];
          const auto last = m.col_indices[static_cast<std::size_t>(m.row_offsets[r + 1] - 1)];
          stats.span_sum += static_cast<std::uint64_t>(last - first + 1);
        }
        return stats;
      },
      [](RowStatistics a, const RowStatistics& b) {
        a.join(b);
        return a;
      });
}

}  // namespace

MatrixFeatures common_features(const CsrMatrix<double>& m) {
  MatrixFeatures f;
  f.rows = m.rows;
  f.cols = m.cols;
  f.nnz = m.nnz();
  if (m.rows == 0) return f;

  // The DF f_A of paper 000 (Sec. 4.1), in parallel from the row offsets.
  const RowLengthDistribution df = row_length_distribution(m.row_offsets);
  f.distribution = df.sets;
  f.empty_rows = df.empty_rows;
  const RowStatistics stats = row_statistics(m);
  f.row_length_min = stats.shortest;
  f.row_length_max = stats.longest;
  const double n = static_cast<double>(m.rows);
  f.row_length_mean = static_cast<double>(stats.length_sum) / n;
  f.row_length_stddev = std::sqrt(std::max(0.0, static_cast<double>(stats.length_squares_sum) / n -
                                                    f.row_length_mean * f.row_length_mean));
  if (m.cols > 0)
    f.mean_row_span_fraction =
        static_cast<double>(stats.span_sum) / n / static_cast<double>(m.cols);
  f.x_sectors_per_nonzero = x_sectors_per_nonzero(m);
  return f;
}

namespace {

// Runs the hooks of `entries` on m given f's common features and files what they return; the
// hooks are independent (pure in m and f), so they run side by side: they were most of the
// pass when run one after another (bench/feature_timing: ~85 % on a 4.4M-nonzero stencil), each
// a single walk of the matrix that one core cannot keep busy for long.
void add_hooks(const CsrMatrix<double>& m, std::span<const FormatEntry* const> entries,
               FeatureEffort effort, MatrixFeatures& f,
               std::vector<std::shared_ptr<const PlanPartition>>* partitions) {
  std::vector<std::optional<FieldSet>> own(entries.size());
  std::vector<std::vector<std::shared_ptr<const PlanPartition>>> computed(entries.size());
  tbb::parallel_for(std::size_t{0}, entries.size(), [&](std::size_t i) {
    own[i] = own_features_at(*entries[i]->rules, m, f, effort, &computed[i]);
  });
  for (std::size_t i = 0; i < entries.size(); ++i) {
    if (own[i])
      f.format_features.insert_or_assign(std::string(entries[i]->rules->name()),
                                         std::move(*own[i]));
    if (partitions != nullptr)
      partitions->insert(partitions->end(), computed[i].begin(), computed[i].end());
  }
}

}  // namespace

MatrixFeatures extract_features(const CsrMatrix<double>& m, const FormatRegistry& registry,
                                FeatureEffort effort,
                                std::vector<std::shared_ptr<const PlanPartition>>* partitions,
                                const std::function<FormatFilter(const MatrixFeatures&)>& computes_own) {
  MatrixFeatures f = common_features(m);
  if (m.rows == 0) return f;
  const FormatFilter wanted = computes_own ? computes_own(f) : FormatFilter{};
  std::vector<const FormatEntry*> hooked;
  for (const FormatEntry& entry : registry.entries()) {
    if (!wanted || wanted(entry))
      hooked.push_back(&entry);
    else
      f.formats_left_out.emplace_back(entry.rules->name());
  }
  std::sort(f.formats_left_out.begin(), f.formats_left_out.end());
  add_hooks(m, hooked, effort, f, partitions);
  return f;
}

std::size_t extend_features(const CsrMatrix<double>& m, const FormatRegistry& registry,
                            FeatureEffort effort, MatrixFeatures& f,
                            const FormatFilter& computes_own,
                            std::vector<std::shared_ptr<const PlanPartition>>* partitions) {
  std::vector<const FormatEntry*> hooked;
  std::erase_if(f.formats_left_out, [&](const std::string& name) {
    const FormatEntry* entry = registry.find(name);
    if (entry == nullptr || (computes_own && !computes_own(*entry))) return false;
    hooked.push_back(entry);
    return true;
  });
  add_hooks(m, hooked, effort, f, partitions);
  return hooked.size();
}

}  // namespace spmvd
