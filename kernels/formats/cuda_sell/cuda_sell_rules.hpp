#pragma once
// SELL-C-sigma (Kreutzer et al., SISC 2014; layout in common/sell_layout.hpp): rows sorted by
// length within windows of sigma rows (FormatParams.sort_window; 1 = unsorted), cut into
// slices of C rows (FormatParams.slice_height), each padded to its longest row and stored
// column-major. One thread per row, grid-stride; a sorted row's result is scattered back to the
// caller's row through the permutation. block_size is swept; the grid is one wave of resident
// blocks.

#include <array>
#include <cstdint>
#include <vector>

#include "kernels/format_rules.hpp"

namespace spmvd {

inline constexpr FormatId kCudaSellFormatId{8};

// C = 32 matches a warp: one slice per warp, so a warp's lanes stop together unless row
// lengths inside the slice differ. C = 64 halves the slice-offset reads for the price of
// more padding.
inline constexpr std::array<std::uint32_t, 2> kSellSliceHeights{32, 64};
// sigma candidates; the last stands for "all rows" (a full sort) and is replaced by rows.
inline constexpr std::array<std::uint32_t, 3> kSellSortWindows{1, 256, 4096};
inline constexpr std::array<std::uint32_t, 3> kSellBlockSizes{128, 256, 512};

class CudaSellRules final : public FormatRules {
 public:
  FormatId id() const noexcept override { return kCudaSellFormatId; }
  std::string_view name() const noexcept override { return "cuda_sell"; }
  bool needs_gpu() const noexcept override { return true; }

  bool admissible(const MatrixFeatures& features, const DeviceInfo& device, Precision precision,
                  std::uint64_t memory_budget_bytes) const override;
  // kSellSliceHeights x sort_windows(features) x kSellBlockSizes.
  std::vector<Candidate> candidates(const MatrixFeatures& features,
                                    const DeviceInfo& device) const override;
  // (slices + 1) 64-bit slice offsets + padded slots of (column index + value) + a 32-bit
  // permutation when sort_window > 1. Exact when sort_window >= rows (padding then follows from
  // the row-length distribution), nearly so unsorted (from the group padding); otherwise an
  // upper bound, since the order of the rows within a window is not a feature: see
  // sell_slot_bound.
  std::uint64_t device_bytes(const MatrixFeatures& features, Precision precision,
                             const Candidate& candidate) const override;

  // kSellSortWindows clamped to rows, plus rows itself, ascending, without duplicates.
  static std::vector<std::uint32_t> sort_windows(const MatrixFeatures& features);
  // Padded slots of a SELL-C-sigma layout: with sigma >= rows, C * the sum of the sorted slice
  // leaders' lengths (exact); unsorted (sigma <= 1) with the features' group padding for C,
  // its padded non-zeros plus the last slice's padding rows at the longest row; otherwise C *
  // the sum of the ceil(rows / C) longest rows, which bounds every order, because each slice's
  // width is the length of a distinct row. Features without a distribution: C * slices * the
  // longest row.
  static std::int64_t sell_slot_bound(const MatrixFeatures& features, std::int64_t slice_height,
                                      std::int64_t sort_window);
};

}  // namespace spmvd
