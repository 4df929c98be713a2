#include "kernels/formats/cuda_dia/cuda_dia_rules.hpp"

#include <tbb/blocked_range.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_reduce.h>

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <vector>

#include "core/csr_matrix.hpp"
#include "kernels/formats/common/rules_support.hpp"

namespace spmvd {

CudaDiaFeatures compute_cuda_dia_features(const CsrMatrix<double>& m) {
  // Ranges of rows collect their distinct slots (offset + rows - 1, in [0, rows + cols - 1))
  // side by side, each with a bitmap of its thread's that it clears after itself, and stop
  // once they hold more than the cap; the union of the sorted lists is the count. It was the
  // longest hook of a stencil's feature pass when serial (10 ms of 27 for 4.4M non-zeros on
  // the H100's host, bench/feature_timing). A range that stops holds cap slots, so the union
  // then reaches the cap too: the result is min(distinct, cap) however the rows are split.
  const std::int64_t cap = kDiaMaxDiagonals + 1;
  using Slots = std::vector<std::int64_t>;
  const auto slot_words = static_cast<std::size_t>((m.rows + m.cols + 63) / 64);
  tbb::enumerable_thread_specific<std::vector<std::uint64_t>> bitmaps(
      [slot_words] { return std::vector<std::uint64_t>(slot_words, 0); });
  const auto distinct_of = [&](const tbb::blocked_range<std::int64_t>& rows) {
    std::vector<std::uint64_t>& seen = bitmaps.local();
    Slots slots;
    for (std::int64_t r = rows.begin();
         r < rows.end() && static_cast<std::int64_t>(slots.size()) < cap; ++r)
      for (RowOffset k = m.row_offsets[static_cast<std::size_t>(r)];
           k < m.row_offsets[static_cast<std::size_t>(r + 1)]; ++k) {
        const std::int64_t slot = m.col_indices[static_cast<std::size_t>(k)] - r + m.rows - 1;
        std::uint64_t& word = seen[static_cast<std::size_t>(slot) / 64];
        const std::uint64_t bit = std::uint64_t{1} << (slot % 64);
        if ((word & bit) == 0) {
          word |= bit;
          slots.push_back(slot);
        }
      }
    for (const std::int64_t slot : slots) seen[static_cast<std::size_t>(slot) / 64] = 0;
    std::sort(slots.begin(), slots.end());
    if (static_cast<std::int64_t>(slots.size()) > cap) slots.resize(static_cast<std::size_t>(cap));
    return slots;
  };
  const auto unite = [cap](const Slots& a, const Slots& b) {
    Slots both;
    std::set_union(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(both));
    if (static_cast<std::int64_t>(both.size()) > cap) both.resize(static_cast<std::size_t>(cap));
    return both;
  };
  const Slots slots = tbb::parallel_reduce(
      tbb::blocked_range<std::int64_t>(0, m.rows, 16384), Slots{},
      [&](const tbb::blocked_range<std::int64_t>& rows, const Slots& so_far) {
        return unite(so_far, distinct_of(rows));
      },
      unite);
  return CudaDiaFeatures{.diagonals = static_cast<std::int64_t>(slots.size())};
}

std::optional<CudaDiaFeatures> cuda_dia_features(const MatrixFeatures& features) {
  const auto it = features.format_features.find("cuda_dia");
  if (it == features.format_features.end()) return std::nullopt;
  return it->second.as<CudaDiaFeatures>("features of cuda_dia");
}

bool CudaDiaRules::admissible(const MatrixFeatures& features, const DeviceInfo& device,
                              Precision precision, std::uint64_t memory_budget_bytes) const {
  if (!device.is_gpu) return false;
  const std::optional<CudaDiaFeatures> own = cuda_dia_features(features);
  if (!own || own->diagonals > kDiaMaxDiagonals) return false;
  if (own->diagonals * features.rows > kDiaMaxSlotsPerNonzero * features.nnz) return false;
  return smallest_candidate_bytes(*this, features, device, precision) <= memory_budget_bytes;
}

std::vector<Candidate> CudaDiaRules::candidates(const MatrixFeatures& features,
                                                const DeviceInfo& device) const {
  // Without the diagonals counted, or with more than it counts, nothing bounds DIA's arrays.
  const std::optional<CudaDiaFeatures> own = cuda_dia_features(features);
  if (!own || own->diagonals > kDiaMaxDiagonals) return {};
  return one_thread_per_row_candidates(id(), {}, kDiaBlockSizes, features.rows, device);
}

std::uint64_t CudaDiaRules::device_bytes(const MatrixFeatures& features, Precision precision,
                                         const Candidate&) const {
  const std::optional<CudaDiaFeatures> own = cuda_dia_features(features);
  const auto diagonals = static_cast<std::uint64_t>(own ? own->diagonals : 0);
  return diagonals * static_cast<std::uint64_t>(features.rows) * value_bytes(precision) +
         diagonals * sizeof(std::int32_t);
}

std::optional<FieldSet> CudaDiaRules::own_features(const CsrMatrix<double>& matrix,
                                                   const MatrixFeatures&) const {
  return FieldSet::of(compute_cuda_dia_features(matrix));
}

}  // namespace spmvd
