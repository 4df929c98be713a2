#include "kernels/formats/cuda_sell/cuda_sell_rules.hpp"

#include <algorithm>

#include "core/csr_matrix.hpp"
#include "kernels/formats/common/row_length_distribution.hpp"
#include "kernels/formats/common/rules_support.hpp"
#include "kernels/formats/cuda_csr_vector/cuda_csr_vector_rules.hpp"
#include "kernels/formats/cuda_sell/cuda_sell_features.hpp"

namespace spmvd {

bool CudaSellRules::admissible(const MatrixFeatures& features, const DeviceInfo& device,
                               Precision precision, std::uint64_t memory_budget_bytes) const {
  if (!device.is_gpu) return false;
  return some_candidate_fits(*this, features, device, precision, memory_budget_bytes);
}

std::vector<Candidate> CudaSellRules::candidates(const MatrixFeatures& features,
                                                 const DeviceInfo& device) const {
  std::vector<Candidate> out;
  for (const std::uint32_t height : kSellSliceHeights)
    for (const std::uint32_t window : sort_windows(features))
      for (const std::uint32_t block : kSellBlockSizes)
        out.push_back(Candidate{
            .format = id(),
            .params = FieldSet::of(CudaSellParams{.slice_height = height, .sort_window = window}),
            .launch = {
                .block_size = block,
                .threads_per_row = 1,
                .grid_size = CudaCsrVectorRules::grid_size(features.rows, 1, block, device)}});
  return out;
}

std::uint64_t CudaSellRules::device_bytes(const MatrixFeatures& features, Precision precision,
                                          const Candidate& candidate) const {
  const CudaSellParams params = params_of(candidate);
  const std::int64_t height = std::max<std::uint32_t>(params.slice_height, 1);
  const auto slices = static_cast<std::uint64_t>((features.rows + height - 1) / height);
  const auto slots =
      static_cast<std::uint64_t>(sell_slot_bound(features, height, params.sort_window));
  const std::uint64_t permutation =
      params.sort_window > 1 ? static_cast<std::uint64_t>(features.rows) * 4 : 0;
  return (slices + 1) * sizeof(std::int64_t) + slots * (sizeof(ColIndex) + value_bytes(precision)) +
         permutation;
}

std::uint64_t CudaSellRules::streamed_bytes(const MatrixFeatures& features, Precision precision,
                                            const Candidate& candidate) const {
  const CudaSellParams params = params_of(candidate);
  const std::optional<std::uint64_t> slots =
      params.sort_window <= 1 ? unsorted_slot_stream_bytes(features, precision) : std::nullopt;
  if (!slots) return device_bytes(features, precision, candidate);
  const std::int64_t height = std::max<std::uint32_t>(params.slice_height, 1);
  const auto slices = static_cast<std::uint64_t>((features.rows + height - 1) / height);
  return (slices + 1) * sizeof(std::int64_t) + *slots;
}

std::optional<std::uint64_t> CudaSellRules::unsorted_slot_stream_bytes(
    const MatrixFeatures& features, Precision precision) {
  const std::optional<CudaSellFeaturesView> own = cuda_sell_features_view(features);
  if (!own) return std::nullopt;
  // A sector holds 32 / b entries of b bytes of one slice column: 8 rows of indices or fp32
  // values, 4 rows of fp64 values.
  const auto slots_of = [&](std::uint64_t entry_bytes) {
    return static_cast<std::uint64_t>(entry_bytes == 8 ? own->sector_slots_4 : own->sector_slots_8);
  };
  const std::uint64_t vb = value_bytes(precision);
  return slots_of(sizeof(ColIndex)) * sizeof(ColIndex) + slots_of(vb) * vb;
}

std::optional<FieldSet> CudaSellRules::own_features(const CsrMatrix<double>& matrix,
                                                    const MatrixFeatures& common) const {
  return FieldSet::of(compute_cuda_sell_features(matrix, common.x_sectors_per_nonzero));
}

double CudaSellRules::gather_sectors_per_nonzero(const MatrixFeatures& features,
                                                 const Candidate& candidate) const {
  return sorted_sectors_per_nonzero(features, params_of(candidate).sort_window);
}

std::vector<std::uint32_t> CudaSellRules::sort_windows(const MatrixFeatures& features) {
  const auto rows = static_cast<std::uint32_t>(std::max<std::int64_t>(features.rows, 1));
  std::vector<std::uint32_t> windows{rows};
  for (const std::uint32_t window : kSellSortWindows) windows.push_back(std::min(window, rows));
  std::sort(windows.begin(), windows.end());
  windows.erase(std::unique(windows.begin(), windows.end()), windows.end());
  return windows;
}

std::int64_t CudaSellRules::sell_slot_bound(const MatrixFeatures& features,
                                            std::int64_t slice_height, std::int64_t sort_window) {
  slice_height = std::max<std::int64_t>(slice_height, 1);
  const std::int64_t slices = (features.rows + slice_height - 1) / slice_height;
  // Without a distribution: every slice as wide as the longest row (ELL's padding).
  if (!distribution_covers_nnz(features)) return slice_height * slices * features.row_length_max;
  if (sort_window > 1) {
    if (const std::optional<std::int64_t> counted =
            sorted_slots(features, slice_height, sort_window))
      return *counted;
  }
  if (sort_window >= features.rows)
    return slice_height * sorted_group_leader_sum(features, slice_height);
  // Unsorted, the slices are the row groups of the features' group padding: exact, but for
  // the rows that pad the last slice to its full height (bounded by the longest row).
  if (sort_window <= 1) {
    const std::optional<CudaSellFeaturesView> own = cuda_sell_features_view(features);
    const std::vector<RowLengthCount> padded =
        own ? padded_distribution(*own, slice_height) : std::vector<RowLengthCount>{};
    if (!padded.empty()) {
      std::int64_t slots = (slices * slice_height - features.rows) * features.row_length_max;
      for (const RowLengthCount& set : padded) slots += set.length * set.rows;
      return slots;
    }
  }
  return slice_height * longest_rows_length_sum(features, slices);
}

}  // namespace spmvd
