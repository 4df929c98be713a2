#pragma once
// What cuda_sell needs of a matrix beyond the common features (FormatRules::own_features):
// the padding of unsorted slices and the x gathers of sorted windows. Computed once per matrix
// by feature extraction and stored with the plan under "cuda_sell".

#include <cstdint>
#include <optional>
#include <span>
#include <tuple>
#include <vector>

#include "core/csr_matrix.hpp"
#include "core/field_set.hpp"
#include "core/matrix_features.hpp"

namespace spmvd {

// Sort windows whose gathers are measured, beside the whole matrix (kSellSortWindows' sorted
// ones).
inline constexpr std::int64_t kSellFeatureSortWindows[] = {256, 4096};

struct CudaSellFeatures {
  // The rows of groups of 32 (64) consecutive rows, each row counted at the length of the
  // longest row of its group (the last group may be shorter): what an unsorted slice of that
  // height stores. Parallel lists, ascending in length; length 0 where a whole group is empty.
  std::vector<std::int64_t> padded_lengths_32;
  std::vector<std::int64_t> padded_rows_32;
  std::vector<std::int64_t> padded_lengths_64;
  std::vector<std::int64_t> padded_rows_64;
  // x sectors per non-zero (MatrixFeatures::x_sectors_per_nonzero) of the rows in the order a
  // stable sort by descending length within windows of sort_windows[i] rows leaves them (the
  // whole matrix where it equals the rows): one per distinct min(w, rows) of
  // kSellFeatureSortWindows and rows, ascending. Sorting pulls rows of one length together from
  // across the window, so a mesh whose lengths vary gathers x at random once sorted.
  std::vector<std::int64_t> sort_windows;
  std::vector<double> sorted_sectors_per_nonzero;
  // The slots slices of 32 (64) rows store in that order, each slice at its longest row (as
  // sell_slice_offsets lays them out), parallel to sort_windows. A window's sort leaves short
  // runs of one length, so its slices hold little padding; without the count, the bound had
  // each slice as wide as one of the matrix's longest rows (3.2x the slots of
  // bayer10-x32-renumbered's windows of 256 and 4096, whose cuda_sell candidates then measured
  // 0.40-0.46 of their predictions; H100, 2026-12-07, docs/TUNER.md's exhaustive run).
  std::vector<std::int64_t> sorted_slots_32;
  std::vector<std::int64_t> sorted_slots_64;
  // Slots of groups of 4 (8) consecutive rows, each group counted at its longest row: the slots
  // of an unsorted slice whose 32-byte sector is fetched for fp64 values (for fp32 values and
  // 32-bit column indices). Padding follows a row's entries and both SELL kernels stop a row at
  // its first padding column (common/sell_layout.hpp), so a sector is read only where one of its
  // rows is still running: the padding that costs bytes is this, not the slice's.
  std::int64_t sector_slots_4 = 0;
  std::int64_t sector_slots_8 = 0;

  static constexpr auto kFields = std::tuple{
      declare_field("padded_lengths_32", &CudaSellFeatures::padded_lengths_32),
      declare_field("padded_rows_32", &CudaSellFeatures::padded_rows_32),
      declare_field("padded_lengths_64", &CudaSellFeatures::padded_lengths_64),
      declare_field("padded_rows_64", &CudaSellFeatures::padded_rows_64),
      declare_field("sort_windows", &CudaSellFeatures::sort_windows),
      declare_field("sorted_sectors_per_nonzero", &CudaSellFeatures::sorted_sectors_per_nonzero),
      declare_field("sorted_slots_32", &CudaSellFeatures::sorted_slots_32),
      declare_field("sorted_slots_64", &CudaSellFeatures::sorted_slots_64),
      declare_field("sector_slots_4", &CudaSellFeatures::sector_slots_4),
      declare_field("sector_slots_8", &CudaSellFeatures::sector_slots_8)};
  friend bool operator==(const CudaSellFeatures&, const CudaSellFeatures&) = default;
};

// O(rows) per slice height and one O(nnz) gather count and O(rows) slot count per sort window (a
// window of rows whose every row has one length moves no row: the unsorted count is reused).
CudaSellFeatures compute_cuda_sell_features(const CsrMatrix<double>& m, double unsorted_sectors);

// The features' cuda_sell entry, nullopt where its hook did not run. Throws
// Error(invalid_argument) when the entry does not decode (a stored plan of another shape).
std::optional<CudaSellFeatures> cuda_sell_features(const MatrixFeatures& features);

// The same lists read in place, without copying them: the tuner asks for them once per
// candidate (its device bytes, its gathers), and cuda_sell_features copies all six lists each
// time (a fifth of ranking a power-law matrix, 2026-11-24, bench/ranking-timing). Valid while
// `features` is; nullopt where the hook did not run; throws as cuda_sell_features does.
struct CudaSellFeaturesView {
  std::span<const std::int64_t> padded_lengths_32;
  std::span<const std::int64_t> padded_rows_32;
  std::span<const std::int64_t> padded_lengths_64;
  std::span<const std::int64_t> padded_rows_64;
  std::span<const std::int64_t> sort_windows;
  std::span<const double> sorted_sectors_per_nonzero;
  std::span<const std::int64_t> sorted_slots_32;
  std::span<const std::int64_t> sorted_slots_64;
  std::int64_t sector_slots_4 = 0;
  std::int64_t sector_slots_8 = 0;
};
std::optional<CudaSellFeaturesView> cuda_sell_features_view(const MatrixFeatures& features);

// The padded distribution of slices of slice_height (32 or 64) rows; empty for another height.
std::vector<RowLengthCount> padded_distribution(const CudaSellFeatures& features,
                                                std::int64_t slice_height);
std::vector<RowLengthCount> padded_distribution(const CudaSellFeaturesView& features,
                                                std::int64_t slice_height);

// x sectors per non-zero after sorting within windows of sort_window rows: that of the
// measured window min(sort_window, rows); the unsorted value for sort_window <= 1, or where
// the window was not measured.
double sorted_sectors_per_nonzero(const MatrixFeatures& features, std::int64_t sort_window);

// The slots of slices of slice_height (32 or 64) rows after sorting within windows of
// sort_window > 1 rows, as counted for the window min(sort_window, rows); nullopt for another
// height, a window not counted, or without the hook's features.
std::optional<std::int64_t> sorted_slots(const MatrixFeatures& features, std::int64_t slice_height,
                                         std::int64_t sort_window);

}  // namespace spmvd
