#include "kernels/formats/cuda_bce/bce_row_runs.hpp"

#include <tbb/blocked_range.h>
#include <tbb/combinable.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <string>

#include "core/error.hpp"

namespace spmvd {
namespace {

// Index of `length` in the ascending distribution; -1 for 0 (empty rows are no set).
std::int64_t set_of(std::span<const RowLengthCount> distribution, std::int64_t length) {
  const auto it = std::lower_bound(
      distribution.begin(), distribution.end(), length,
      [](const RowLengthCount& set, std::int64_t value) { return set.length < value; });
  if (it == distribution.end() || it->length != length) return -1;
  return it - distribution.begin();
}

}  // namespace

BceRowRuns compute_bce_row_runs(const CsrMatrix<double>& matrix,
                                std::span<const RowLengthCount> distribution) {
  const auto& offsets = matrix.row_offsets;
  const std::int64_t rows = matrix.rows;
  const auto length = [&](std::int64_t r) { return offsets[r + 1] - offsets[r]; };
  tbb::combinable<std::vector<std::int64_t>> counts(
      [&] { return std::vector<std::int64_t>(distribution.size(), 0); });
  // A row starts a run where the row before it (in any chunk) has another length.
  tbb::parallel_for(tbb::blocked_range<std::int64_t>(0, rows, 1 << 16),
                    [&](const tbb::blocked_range<std::int64_t>& range) {
                      std::vector<std::int64_t>& local = counts.local();
                      for (std::int64_t r = range.begin(); r < range.end(); ++r) {
                        const std::int64_t len = length(r);
                        if (r > 0 && length(r - 1) == len) continue;
                        const std::int64_t set = set_of(distribution, len);
                        if (set >= 0) ++local[static_cast<std::size_t>(set)];
                      }
                    });
  BceRowRuns out{.runs = std::vector<std::int64_t>(distribution.size(), 0)};
  counts.combine_each([&](const std::vector<std::int64_t>& local) {
    for (std::size_t s = 0; s < local.size(); ++s) out.runs[s] += local[s];
  });
  return out;
}

std::optional<BceRowRuns> cuda_bce_row_runs(const MatrixFeatures& features) {
  const auto it = features.format_features.find("cuda_bce");
  if (it == features.format_features.end()) return std::nullopt;
  BceRowRuns runs = it->second.as<BceRowRuns>("features of cuda_bce");
  if (runs.runs.size() != features.distribution.size())
    throw_invalid("features of cuda_bce: row runs for " + std::to_string(runs.runs.size()) +
                  " row vector sets, the distribution has " +
                  std::to_string(features.distribution.size()));
  return runs;
}

std::optional<std::span<const std::int64_t>> cuda_bce_row_runs_in_place(
    const MatrixFeatures& features) {
  const auto it = features.format_features.find("cuda_bce");
  if (it == features.format_features.end()) return std::nullopt;
  const std::vector<std::int64_t>* runs = it->second.list<std::int64_t>("runs");
  if (runs == nullptr || it->second.fields().size() != 1 ||
      runs->size() != features.distribution.size()) {
    cuda_bce_row_runs(features);  // throws what decoding finds wrong
    throw_invalid("features of cuda_bce: not BceRowRuns");
  }
  return std::span<const std::int64_t>(*runs);
}

std::int64_t bce_block_row_runs(const MatrixFeatures& features,
                                std::span<const std::int64_t> row_runs,
                                std::int64_t first_length, std::int64_t last_length) {
  std::int64_t runs = 0;
  std::int64_t block_rows = 0;
  // The block's sets are consecutive in the ascending DF: found by bisection, not a full scan
  // (OPA asks for every block of up to 128 groups).
  const std::span<const RowLengthCount> sets(features.distribution);
  const auto first = std::lower_bound(
      sets.begin(), sets.end(), first_length,
      [](const RowLengthCount& set, std::int64_t value) { return set.length < value; });
  for (auto set = first; set != sets.end() && set->length <= last_length; ++set) {
    runs += row_runs[static_cast<std::size_t>(set - sets.begin())];
    block_rows += set->rows;
  }
  return std::min({runs, block_rows, features.rows - block_rows + 1});
}

}  // namespace spmvd
