#pragma once
// SELL-C-sigma (Kreutzer et al., SISC 2014; layout in common/sell_layout.hpp): rows sorted by
// length within windows of sigma rows (params.sort_window; 1 = unsorted), cut into
// slices of C rows (params.slice_height), each padded to its longest row and stored
// column-major. One thread per row, grid-stride; a sorted row's result is scattered back to the
// caller's row through the permutation. block_size is swept; the grid is one wave of resident
// blocks.

#include <array>
#include <cstdint>
#include <tuple>
#include <vector>

#include "kernels/build_source.hpp"
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

// cuda_sell's parameters (Candidate::params holds FieldSet::of(them)).
struct CudaSellParams {
  std::uint32_t slice_height = 0;  // C: rows per slice
  std::uint32_t sort_window = 0;   // sigma: rows sorted together by length (1: unsorted)
  static constexpr auto kFields =
      std::tuple{declare_field("slice_height", &CudaSellParams::slice_height),
                 declare_field("sort_window", &CudaSellParams::sort_window)};
  friend bool operator==(const CudaSellParams&, const CudaSellParams&) = default;
};

class CudaSellRules final : public FormatRules {
 public:
  FormatId id() const noexcept override { return kCudaSellFormatId; }
  std::string_view name() const noexcept override { return "cuda_sell"; }
  bool needs_gpu() const noexcept override { return true; }
  // no dedicated model: the bytes model, fitted on this format's own samples.
  std::string_view model_family() const noexcept override { return "bytes"; }

  bool admissible(const MatrixFeatures& features, const DeviceInfo& device, Precision precision,
                  std::uint64_t memory_budget_bytes) const override;
  // kSellSliceHeights x sort_windows(features) x kSellBlockSizes.
  std::vector<Candidate> candidates(const MatrixFeatures& features,
                                    const DeviceInfo& device) const override;
  // (slices + 1) 64-bit slice offsets + padded slots of (column index + value) + a 32-bit
  // permutation when sort_window > 1. Exact where the window's slots were counted (its own
  // features) or sort_window >= rows, nearly so unsorted (from the group padding); otherwise
  // an upper bound: see sell_slot_bound.
  std::uint64_t device_bytes(const MatrixFeatures& features, Precision precision,
                             const Candidate& candidate) const override;
  // Unsorted (sort_window <= 1): device_bytes with the slots' column indices and values read
  // per 32-byte sector (unsorted_slot_stream_bytes); sorted, device_bytes.
  std::uint64_t streamed_bytes(const MatrixFeatures& features, Precision precision,
                               const Candidate& candidate) const override;

  // CudaSellFeatures (cuda_sell_features.hpp).
  std::optional<FieldSet> own_features(const CsrMatrix<double>& matrix,
                                       const MatrixFeatures& common) const override;
  // The gathers of the candidate's sort window (sorted_sectors_per_nonzero).
  double gather_sectors_per_nonzero(const MatrixFeatures& features,
                                    const Candidate& candidate) const override;

  // kSellSortWindows clamped to rows, plus rows itself, ascending, without duplicates.
  static std::vector<std::uint32_t> sort_windows(const MatrixFeatures& features);
  // Padded slots of a SELL-C-sigma layout: with sigma > 1, the slots its own features counted
  // after that window's sort (CudaSellFeatures::sorted_slots_32 / _64, exact); else with
  // sigma >= rows, C * the sum of the sorted slice leaders' lengths (exact); unsorted (sigma
  // <= 1) with the group padding of its own features for C, its padded non-zeros plus the last
  // slice's padding rows at the longest row; otherwise (or without its own features:
  // calibration samples) C * the sum of the ceil(rows / C) longest rows, which bounds every
  // order, because each slice's width is the length of a distinct row. Features without a
  // distribution: C * slices * the longest row.
  static std::int64_t sell_slot_bound(const MatrixFeatures& features, std::int64_t slice_height,
                                      std::int64_t sort_window);
  // The column-index and value bytes a multiply reads of an unsorted SELL layout (either slice
  // height): per 32-byte sector of a slice column, the slots of the sector's rows where one of
  // them still runs (CudaSellFeatures::sector_slots_4 / _8). nullopt without cuda_sell's own
  // features (calibration samples, whose rows of one length leave no padding to skip).
  static std::optional<std::uint64_t> unsorted_slot_stream_bytes(const MatrixFeatures& features,
                                                                 Precision precision);

  // Builds cuda_sell (cuda_sell_rules.hpp) on the source's CUDA device: the SELL-C-sigma arrays
  // and the row permutation built on the device from the shared CSR (common/device_sell.hpp),
  // shared with the other candidates of the same (C, sigma, precision); apply() launches one
  // thread per sorted row, which writes its result to the caller's row (y[permutation[i]]), on
  // the device stream. Throws Error(invalid_argument) for a candidate of another format, a slice
  // height not in kSellSliceHeights, a block size not in kSellBlockSizes, sort_window 0 or
  // grid_size 0; Error(failed_precondition) on a CPU device; Error(resource_exhausted) when
  // memory runs out.
  static std::unique_ptr<SpmvOperator> build(const BuildSource& source, Precision precision,
                                             const Candidate& candidate);

  // The candidate's CudaSellParams; throws Error(invalid_argument) naming the field a stored plan
  // lacks.
  static CudaSellParams params_of(const Candidate& candidate) {
    return candidate.params.as<CudaSellParams>("cuda_sell");
  }
};

}  // namespace spmvd
