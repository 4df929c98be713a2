#include "kernels/formats/cuda_sell/cuda_sell_features.hpp"

#include <algorithm>
#include <set>
#include <span>
#include <vector>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "core/structure_features.hpp"
#include "kernels/formats/common/sell_layout.hpp"

namespace spmvd {
namespace {

// The longest row of each group of kGroupRows consecutive rows (the last may be shorter), in
// parallel: the groups of 8, 32 and 64 rows are unions of these.
constexpr std::int64_t kGroupRows = 4;

std::vector<std::int64_t> longest_of_groups_of_4(const CsrMatrix<double>& m) {
  const std::int64_t groups = (m.rows + kGroupRows - 1) / kGroupRows;
  std::vector<std::int64_t> longest(static_cast<std::size_t>(groups), 0);
  tbb::parallel_for(tbb::blocked_range<std::int64_t>(0, groups, 4096),
                    [&](const tbb::blocked_range<std::int64_t>& range) {
                      for (std::int64_t g = range.begin(); g < range.end(); ++g) {
                        const std::int64_t last = std::min((g + 1) * kGroupRows, m.rows);
                        std::int64_t l = 0;
                        for (std::int64_t r = g * kGroupRows; r < last; ++r)
                          l = std::max(l, m.row_length(r));
                        longest[static_cast<std::size_t>(g)] = l;
                      }
                    });
  return longest;
}

// visit(longest, rows) for each group of group_rows (a multiple of kGroupRows) consecutive rows.
template <typename Visit>
void for_each_row_group(std::span<const std::int64_t> longest_of_4, std::int64_t rows,
                        std::int64_t group_rows, Visit&& visit) {
  const std::int64_t per_group = group_rows / kGroupRows;
  const auto groups_of_4 = static_cast<std::int64_t>(longest_of_4.size());
  for (std::int64_t first = 0; first < groups_of_4; first += per_group) {
    const std::int64_t last = std::min(first + per_group, groups_of_4);
    std::int64_t longest = 0;
    for (std::int64_t g = first; g < last; ++g)
      longest = std::max(longest, longest_of_4[static_cast<std::size_t>(g)]);
    visit(longest, std::min(last * kGroupRows, rows) - first * kGroupRows);
  }
}

// Rows of each group of group_rows consecutive rows counted at the group's longest row.
void group_padding(std::span<const std::int64_t> longest_of_4, std::int64_t rows,
                   std::int64_t group_rows, std::vector<std::int64_t>& lengths,
                   std::vector<std::int64_t>& counts) {
  // (longest, rows) of every group, merged by length: a sort of rows / group_rows pairs,
  // not a map insertion per group.
  std::vector<std::pair<std::int64_t, std::int64_t>> groups;
  groups.reserve(static_cast<std::size_t>((rows + group_rows - 1) / group_rows));
  for_each_row_group(longest_of_4, rows, group_rows, [&](std::int64_t longest, std::int64_t n) {
    groups.emplace_back(longest, n);
  });
  std::sort(groups.begin(), groups.end());
  for (const auto& [length, n] : groups) {
    if (!lengths.empty() && lengths.back() == length) {
      counts.back() += n;
    } else {
      lengths.push_back(length);
      counts.push_back(n);
    }
  }
}

// Slots of groups of group_rows consecutive rows, each at its group's longest row.
std::int64_t group_slots(std::span<const std::int64_t> longest_of_4, std::int64_t rows,
                         std::int64_t group_rows) {
  std::int64_t slots = 0;
  for_each_row_group(longest_of_4, rows, group_rows,
                     [&](std::int64_t longest, std::int64_t n) { slots += longest * n; });
  return slots;
}

}  // namespace

CudaSellFeatures compute_cuda_sell_features(const CsrMatrix<double>& m, double unsorted_sectors) {
  CudaSellFeatures f;
  const std::vector<std::int64_t> longest_of_4 = longest_of_groups_of_4(m);
  group_padding(longest_of_4, m.rows, 32, f.padded_lengths_32, f.padded_rows_32);
  group_padding(longest_of_4, m.rows, 64, f.padded_lengths_64, f.padded_rows_64);
  f.sector_slots_4 = group_slots(longest_of_4, m.rows, 4);
  f.sector_slots_8 = group_slots(longest_of_4, m.rows, 8);
  std::set<std::int64_t> windows{m.rows};
  for (const std::int64_t w : kSellFeatureSortWindows) windows.insert(std::min(w, m.rows));
  bool one_length = true;  // no sort moves a row (the walk stops at the first that differs)
  for (std::int64_t r = 1; r < m.rows && one_length; ++r)
    one_length = m.row_length(r) == m.row_length(0);
  // The windows' gathers are independent: counted side by side (this hook is the feature
  // pass's longest, bench/feature_timing).
  std::vector<std::int64_t> counted;
  for (const std::int64_t window : windows)
    if (window > 1) counted.push_back(window);
  std::vector<double> sectors(counted.size(), unsorted_sectors);
  std::vector<std::int64_t> slots_32(counted.size()), slots_64(counted.size());
  tbb::parallel_for(std::size_t{0}, counted.size(), [&](std::size_t i) {
    const std::vector<std::int32_t> order =
        one_length ? std::vector<std::int32_t>{} : length_sorted_row_order(m, counted[i]);
    if (!one_length) sectors[i] = x_sectors_per_nonzero(m, std::span<const std::int32_t>(order));
    // What the layout itself stores: its last slice offset is every slot.
    slots_32[i] = sell_slice_offsets(m, 32, order).back();
    slots_64[i] = sell_slice_offsets(m, 64, order).back();
  });
  f.sort_windows = counted;
  f.sorted_sectors_per_nonzero = sectors;
  f.sorted_slots_32 = slots_32;
  f.sorted_slots_64 = slots_64;
  return f;
}

std::optional<CudaSellFeatures> cuda_sell_features(const MatrixFeatures& features) {
  const auto it = features.format_features.find("cuda_sell");
  if (it == features.format_features.end()) return std::nullopt;
  CudaSellFeatures f = it->second.as<CudaSellFeatures>("features of cuda_sell");
  if (f.padded_lengths_32.size() != f.padded_rows_32.size() ||
      f.padded_lengths_64.size() != f.padded_rows_64.size() ||
      f.sort_windows.size() != f.sorted_sectors_per_nonzero.size() ||
      f.sort_windows.size() != f.sorted_slots_32.size() ||
      f.sort_windows.size() != f.sorted_slots_64.size())
    throw_invalid("features of cuda_sell: parallel lists of different lengths");
  return f;
}

std::optional<CudaSellFeaturesView> cuda_sell_features_view(const MatrixFeatures& features) {
  const auto it = features.format_features.find("cuda_sell");
  if (it == features.format_features.end()) return std::nullopt;
  const FieldSet& entry = it->second;
  const auto* lengths_32 = entry.list<std::int64_t>("padded_lengths_32");
  const auto* rows_32 = entry.list<std::int64_t>("padded_rows_32");
  const auto* lengths_64 = entry.list<std::int64_t>("padded_lengths_64");
  const auto* rows_64 = entry.list<std::int64_t>("padded_rows_64");
  const auto* windows = entry.list<std::int64_t>("sort_windows");
  const auto* sectors = entry.list<double>("sorted_sectors_per_nonzero");
  const auto* sorted_32 = entry.list<std::int64_t>("sorted_slots_32");
  const auto* sorted_64 = entry.list<std::int64_t>("sorted_slots_64");
  const auto* slots_4 = entry.scalar<std::int64_t>("sector_slots_4");
  const auto* slots_8 = entry.scalar<std::int64_t>("sector_slots_8");
  if (lengths_32 == nullptr || rows_32 == nullptr || lengths_64 == nullptr || rows_64 == nullptr ||
      windows == nullptr || sectors == nullptr || sorted_32 == nullptr || sorted_64 == nullptr ||
      slots_4 == nullptr || slots_8 == nullptr || entry.fields().size() != 10 ||
      lengths_32->size() != rows_32->size() || lengths_64->size() != rows_64->size() ||
      windows->size() != sectors->size() || windows->size() != sorted_32->size() ||
      windows->size() != sorted_64->size()) {
    cuda_sell_features(features);  // throws what decoding finds wrong
    throw_invalid("features of cuda_sell: not the ten fields of CudaSellFeatures");
  }
  return CudaSellFeaturesView{.padded_lengths_32 = *lengths_32,
                              .padded_rows_32 = *rows_32,
                              .padded_lengths_64 = *lengths_64,
                              .padded_rows_64 = *rows_64,
                              .sort_windows = *windows,
                              .sorted_sectors_per_nonzero = *sectors,
                              .sorted_slots_32 = *sorted_32,
                              .sorted_slots_64 = *sorted_64,
                              .sector_slots_4 = *slots_4,
                              .sector_slots_8 = *slots_8};
}

namespace {

std::vector<RowLengthCount> zip_distribution(std::span<const std::int64_t> lengths,
                                             std::span<const std::int64_t> rows) {
  std::vector<RowLengthCount> out;
  out.reserve(lengths.size());
  for (std::size_t i = 0; i < lengths.size(); ++i) out.push_back({lengths[i], rows[i]});
  return out;
}

}  // namespace

std::vector<RowLengthCount> padded_distribution(const CudaSellFeaturesView& features,
                                                std::int64_t slice_height) {
  if (slice_height == 32)
    return zip_distribution(features.padded_lengths_32, features.padded_rows_32);
  if (slice_height == 64)
    return zip_distribution(features.padded_lengths_64, features.padded_rows_64);
  return {};
}

std::vector<RowLengthCount> padded_distribution(const CudaSellFeatures& features,
                                                std::int64_t slice_height) {
  return padded_distribution(
      CudaSellFeaturesView{.padded_lengths_32 = features.padded_lengths_32,
                           .padded_rows_32 = features.padded_rows_32,
                           .padded_lengths_64 = features.padded_lengths_64,
                           .padded_rows_64 = features.padded_rows_64,
                           .sort_windows = features.sort_windows,
                           .sorted_sectors_per_nonzero = features.sorted_sectors_per_nonzero,
                           .sorted_slots_32 = features.sorted_slots_32,
                           .sorted_slots_64 = features.sorted_slots_64,
                           .sector_slots_4 = features.sector_slots_4,
                           .sector_slots_8 = features.sector_slots_8},
      slice_height);
}

double sorted_sectors_per_nonzero(const MatrixFeatures& features, std::int64_t sort_window) {
  if (sort_window <= 1) return features.x_sectors_per_nonzero;
  const std::optional<CudaSellFeaturesView> own = cuda_sell_features_view(features);
  if (!own) return features.x_sectors_per_nonzero;
  const std::int64_t window = std::min(sort_window, features.rows);
  for (std::size_t i = 0; i < own->sort_windows.size(); ++i)
    if (own->sort_windows[i] == window) return own->sorted_sectors_per_nonzero[i];
  return features.x_sectors_per_nonzero;
}

std::optional<std::int64_t> sorted_slots(const MatrixFeatures& features, std::int64_t slice_height,
                                         std::int64_t sort_window) {
  if (sort_window <= 1 || (slice_height != 32 && slice_height != 64)) return std::nullopt;
  const std::optional<CudaSellFeaturesView> own = cuda_sell_features_view(features);
  if (!own) return std::nullopt;
  const std::int64_t window = std::min(sort_window, features.rows);
  const std::span<const std::int64_t> slots =
      slice_height == 32 ? own->sorted_slots_32 : own->sorted_slots_64;
  for (std::size_t i = 0; i < own->sort_windows.size(); ++i)
    if (own->sort_windows[i] == window) return slots[i];
  return std::nullopt;
}

}  // namespace spmvd
