#include "kernels/formats/cuda_hyb/cuda_hyb_rules.hpp"

#include <algorithm>
#include <cmath>

#include "core/csr_matrix.hpp"
#include "kernels/formats/common/padding_stop_walk.hpp"
#include "kernels/formats/common/row_length_distribution.hpp"
#include "kernels/formats/common/rules_support.hpp"
#include "kernels/formats/cuda_coo/cuda_coo_rules.hpp"

namespace spmvd {

bool CudaHybRules::admissible(const MatrixFeatures& features, const DeviceInfo& device,
                              Precision precision, std::uint64_t memory_budget_bytes) const {
  if (!device.is_gpu) return false;
  return smallest_candidate_bytes(*this, features, device, precision) <= memory_budget_bytes;
}

std::vector<Candidate> CudaHybRules::candidates(const MatrixFeatures& features,
                                                const DeviceInfo&) const {
  std::vector<Candidate> out;
  for (const std::int64_t width : ell_widths(features)) {
    const std::int64_t coo_entries = coo_entry_count(features, width);
    for (const std::uint32_t block : kHybBlockSizes)
      for (const std::uint32_t per_thread : kHybCooEntriesPerThread) {
        const Candidate candidate{
            .format = id(),
            .params = FieldSet::of(CudaHybParams{.ell_width = static_cast<std::uint32_t>(width)}),
            .launch = {.block_size = block,
                       .threads_per_row = 1,
                       .grid_size = CudaCooRules::grid_size(coo_entries, block, per_thread)}};
        if (std::find(out.begin(), out.end(), candidate) == out.end()) out.push_back(candidate);
      }
  }
  return out;
}

namespace {

// An ELL part of `ell_slots_a_row` slots a row (column index + value) and the COO remainder past
// K = ell_width (row index + column index + value each).
std::uint64_t hyb_bytes(const MatrixFeatures& features, Precision precision,
                        std::int64_t ell_slots_a_row, std::int64_t ell_width) {
  const auto ell_slots =
      static_cast<std::uint64_t>(features.rows) * static_cast<std::uint64_t>(ell_slots_a_row);
  const auto coo_entries =
      static_cast<std::uint64_t>(CudaHybRules::coo_entry_count(features, ell_width));
  return ell_slots * (sizeof(ColIndex) + value_bytes(precision)) +
         coo_entries * (sizeof(std::int32_t) + sizeof(ColIndex) + value_bytes(precision));
}

}  // namespace

std::uint64_t CudaHybRules::device_bytes(const MatrixFeatures& features, Precision precision,
                                         const Candidate& candidate) const {
  const std::int64_t width = params_of(candidate).ell_width;
  return hyb_bytes(features, precision, width, width);
}

std::uint64_t CudaHybRules::streamed_bytes(const MatrixFeatures& features, Precision precision,
                                           const Candidate& candidate) const {
  const std::int64_t width = params_of(candidate).ell_width;
  return hyb_bytes(features, precision, cut_ell_walked_width(features, width), width);
}

std::int64_t CudaHybRules::coo_entry_count(const MatrixFeatures& features, std::int64_t ell_width) {
  return distribution_covers_nnz(features) ? entries_beyond_width(features, ell_width)
                                           : features.nnz;
}

std::int64_t CudaHybRules::bell_garland_ell_width(const MatrixFeatures& features) {
  // rows_with_length_at_least(K) only steps down at the distribution's lengths, so the largest
  // qualifying K is the longest length whose count still reaches the threshold.
  std::int64_t at_least = 0;
  for (auto bucket = features.distribution.rbegin(); bucket != features.distribution.rend();
       ++bucket) {
    at_least += bucket->rows;
    if (at_least >= kHybBreakevenRows && kHybRelativeSpeed * at_least >= features.rows)
      return bucket->length;
  }
  return 0;
}

std::vector<std::int64_t> CudaHybRules::ell_widths(const MatrixFeatures& features) {
  const auto clamp = [&](double width) {
    return std::clamp<std::int64_t>(static_cast<std::int64_t>(width), 0, features.row_length_max);
  };
  std::vector<std::int64_t> widths{
      bell_garland_ell_width(features), clamp(std::round(features.row_length_mean)),
      clamp(std::ceil(features.row_length_mean + features.row_length_stddev))};
  std::sort(widths.begin(), widths.end());
  widths.erase(std::unique(widths.begin(), widths.end()), widths.end());
  return widths;
}

}  // namespace spmvd
