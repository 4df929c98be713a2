#include "tuner/feature_extraction.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_reduce.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "core/structure_features.hpp"
#include "kernels/format_registry.hpp"
#include "partition/row_length_distribution.hpp"

namespace spmvd {

namespace {

// The sum over rows of each row's column span, as an integer (exact, so the same whatever the
// split) over ranges of rows in parallel: one core walking the rows was half of the common
// features of a 20M-nonzero stencil (2-core build host, 2026-11-24). Below 2^64: a span is at
// most 2^31 columns (32-bit column indices) and there are fewer than 2^31 rows.
std::uint64_t column_span_sum(const CsrMatrix<double>& m) {
  return tbb::parallel_reduce(
      tbb::blocked_range<std::int64_t>(0, m.rows, 1 << 15), std::uint64_t{0},
      [&](const tbb::blocked_range<std::int64_t>& range, std::uint64_t sum) {
        for (std::int64_t r = range.begin(); r < range.end(); ++r) {
          if (m.row_length(r) == 0) continue;
          // Columns are sorted within a row (validate()), so the span is last - first + 1.
          const auto first = m.col_indices[static_cast<std::size_t>(m.row_offsets[r])];
          const auto last = m.col_indices[static_cast<std::size_t>(m.row_offsets[r + 1] - 1)];
          sum += static_cast<std::uint64_t>(last - first + 1);
        }
        return sum;
      },
      std::plus<>());
}

}  // namespace

MatrixFeatures common_features(const CsrMatrix<double>& m) {
  if (m.rows == 0) {
    MatrixFeatures f;
    f.cols = m.cols;
    f.nnz = m.nnz();
    return f;
  }
  // The DF f_A of paper 000 (Sec. 4.1), in parallel from the row offsets, and the row-length
  // moments that follow from it.
  MatrixFeatures f = distribution_features(row_length_distribution(m.row_offsets), m.cols);
  if (m.cols > 0)
    f.mean_row_span_fraction = static_cast<double>(column_span_sum(m)) /
                               static_cast<double>(m.rows) / static_cast<double>(m.cols);
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
