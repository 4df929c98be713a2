#pragma once
// BRO-ELL (paper 001, Tang et al., SC'13, Sec. 3.1, Algorithm 1): ELL whose column indices are
// delta-encoded per row and bit-packed, one width per column of a slice of h rows (bit_alloc),
// the row streams multiplexed so a slice's threads load their symbols coalesced, num_col per
// slice; the kernel decodes on the fly. Layout: common/bro_stream.hpp; decoder: bro_stream.cuh.
//
// Variants (CudaBroEllParams::variant), so the benchmark shows what each step buys:
//   paper  - 32-bit symbols, one thread per row (Algorithm 1 as published; h = 256 is the
//            paper's block size, h = 32 one warp per slice, finer bit widths);
//   hopper - 128-bit symbols (one 16-byte vector load per four words of a row stream, the
//            last row_words % 4 words as 32-bit symbols: the same bytes as the paper's layout,
//            a quarter of the stream loads), and optionally several threads per row for long rows
//            (the paper's future work, Sec. 6): each row cut into launch.threads_per_row
//            sub-rows of contiguous entries, each encoded as a stream row of its own, the
//            sub-rows' sums added with warp shuffles.
// reorder: none, or BAR (Sec. 3.4, Algorithm 2, common/bar_reorder.hpp): rows clustered into
// slices; the kernel writes row i's result to y[order[i]], so y is in the caller's order.

#include <array>
#include <cstdint>
#include <optional>
#include <tuple>
#include <vector>

#include "kernels/format_rules.hpp"

namespace spmvd {

inline constexpr FormatId kCudaBroEllFormatId{17};

inline constexpr std::uint32_t kBroVariantPaper = 0;
inline constexpr std::uint32_t kBroVariantHopper = 1;
inline constexpr std::uint32_t kBroReorderNone = 0;
inline constexpr std::uint32_t kBroReorderBar = 1;
// 256: the paper's slice height and thread block (Sec. 4); 32: a slice per warp.
inline constexpr std::uint32_t kBroBlockSize = 256;

// 32-bit words per multiplexed symbol of a variant.
constexpr std::uint32_t bro_words_per_symbol(std::uint32_t variant) {
  return variant == kBroVariantHopper ? 4 : 1;
}

// cuda_bro_ell's parameters (Candidate::params holds FieldSet::of(them)).
struct CudaBroEllParams {
  std::uint32_t slice_height = 0;  // h: stream rows per slice (a multiple of 32)
  std::uint32_t variant = 0;       // kBroVariantPaper or kBroVariantHopper
  std::uint32_t reorder = 0;       // kBroReorderNone or kBroReorderBar
  static constexpr auto kFields =
      std::tuple{declare_field("slice_height", &CudaBroEllParams::slice_height),
                 declare_field("variant", &CudaBroEllParams::variant),
                 declare_field("reorder", &CudaBroEllParams::reorder)};
  friend bool operator==(const CudaBroEllParams&, const CudaBroEllParams&) = default;
};

// One BRO-ELL layout the rules offer: parameters plus the threads per row of the launch.
struct BroEllChoice {
  CudaBroEllParams params;
  std::uint32_t threads_per_row = 1;
  friend bool operator==(const BroEllChoice&, const BroEllChoice&) = default;
};

// The layouts offered, in the order of BroEllFeatures' vectors. BAR clusters whole rows, so it
// is offered with one thread per row only; 4 threads a row only in the hopper variant.
inline constexpr std::array<BroEllChoice, 10> kBroEllChoices{{
    {{256, kBroVariantPaper, kBroReorderNone}, 1},
    {{256, kBroVariantPaper, kBroReorderBar}, 1},
    {{256, kBroVariantHopper, kBroReorderNone}, 1},
    {{256, kBroVariantHopper, kBroReorderBar}, 1},
    {{256, kBroVariantHopper, kBroReorderNone}, 4},
    {{32, kBroVariantPaper, kBroReorderNone}, 1},
    {{32, kBroVariantPaper, kBroReorderBar}, 1},
    {{32, kBroVariantHopper, kBroReorderNone}, 1},
    {{32, kBroVariantHopper, kBroReorderBar}, 1},
    {{32, kBroVariantHopper, kBroReorderNone}, 4},
}};

// Index of (params, threads_per_row) in kBroEllChoices; throws Error(invalid_argument)
// "<owner>: slice_height 48, variant 0, reorder 0, threads_per_row 1 is not a BRO-ELL layout"
// for any other.
std::size_t bro_ell_choice_index(std::string_view owner, const CudaBroEllParams& params,
                                 std::uint32_t threads_per_row);

// The sizes of every layout of kBroEllChoices for the rows of `m` (one entry each): the stream,
// bit_alloc and value slots; and, from the same walk, those of the first hyb_ell_width entries
// of every row (BRO-HYB's ELL part at its K, so cuda_bro_hyb's hook repeats no walk). One
// bro_ell_walk_sizes pass a slice height, parallel over slices, no transformed copy of the
// matrix, no BAR: exact for the layouts without reordering; for BAR the identity order's sizes,
// an upper bound (bar_order keeps a window's order unless its clustering is no larger,
// bar_reorder.hpp), the builder running BAR itself.
struct BroEllFeatures {
  std::vector<std::int64_t> slices;
  std::vector<std::int64_t> stream_words;
  std::vector<std::int64_t> columns;
  std::vector<std::int64_t> value_slots;
  std::int64_t hyb_ell_width = 0;
  std::vector<std::int64_t> hyb_stream_words;  // the leading entries' (slices: as above)
  std::vector<std::int64_t> hyb_columns;
  std::vector<std::int64_t> hyb_value_slots;
  static constexpr auto kFields =
      std::tuple{declare_field("slices", &BroEllFeatures::slices),
                 declare_field("stream_words", &BroEllFeatures::stream_words),
                 declare_field("columns", &BroEllFeatures::columns),
                 declare_field("value_slots", &BroEllFeatures::value_slots),
                 declare_field("hyb_ell_width", &BroEllFeatures::hyb_ell_width),
                 declare_field("hyb_stream_words", &BroEllFeatures::hyb_stream_words),
                 declare_field("hyb_columns", &BroEllFeatures::hyb_columns),
                 declare_field("hyb_value_slots", &BroEllFeatures::hyb_value_slots)};
  friend bool operator==(const BroEllFeatures&, const BroEllFeatures&) = default;
  // The sizes of the leading hyb_ell_width entries of every row, as a BroEllFeatures of their
  // own (its hyb_ fields empty).
  BroEllFeatures leading() const {
    return {.slices = slices,
            .stream_words = hyb_stream_words,
            .columns = hyb_columns,
            .value_slots = hyb_value_slots,
            .hyb_ell_width = 0,
            .hyb_stream_words = {},
            .hyb_columns = {},
            .hyb_value_slots = {}};
  }
};
// Throws Error(invalid_argument) for a negative hyb_ell_width or a row whose columns are not
// strictly increasing.
BroEllFeatures compute_bro_ell_features(const CsrMatrix<double>& m, std::int64_t hyb_ell_width);
// nullopt where the hook did not run (calibration samples); throws Error(invalid_argument)
// when the entry does not decode or its vectors are not one entry per kBroEllChoices.
std::optional<BroEllFeatures> cuda_bro_ell_features(const MatrixFeatures& features);

// The device bytes of layout `index` of `sizes` for `rows` matrix rows: the stream, one byte of
// bit_alloc per slice column, the value slots, two 64-bit offsets per slice (+1), and a 32-bit
// row order under BAR.
std::uint64_t bro_ell_layout_bytes(const BroEllFeatures& sizes, std::size_t index,
                                   std::int64_t rows, Precision precision);

// The stream rows a choice encodes: the rows in BAR order (when asked), each cut into
// threads_per_row sub-rows. `order` receives the row order (empty without reordering).
CsrMatrix<double> bro_ell_stream_rows(const CsrMatrix<double>& m, const BroEllChoice& choice,
                                      std::vector<std::int32_t>& order);

class CudaBroEllRules final : public FormatRules {
 public:
  FormatId id() const noexcept override { return kCudaBroEllFormatId; }
  std::string_view name() const noexcept override { return "cuda_bro_ell"; }
  bool needs_gpu() const noexcept override { return true; }
  // The bytes model at the bytes BRO-ELL really moves (its compressed device_bytes): the
  // paper's Sec. 4.2.1 finds its time linear in the space saved.
  std::string_view model_family() const noexcept override { return "bytes"; }

  bool admissible(const MatrixFeatures& features, const DeviceInfo& device, Precision precision,
                  std::uint64_t memory_budget_bytes) const override;
  // One candidate per kBroEllChoices entry (block kBroBlockSize, one wave of blocks); none
  // without its features.
  std::vector<Candidate> candidates(const MatrixFeatures& features,
                                    const DeviceInfo& device) const override;
  // bro_ell_layout_bytes of the candidate's layout: exact, an upper bound under BAR (see
  // BroEllFeatures). Throws Error(invalid_argument)
  // for a layout not in kBroEllChoices or without features.
  std::uint64_t device_bytes(const MatrixFeatures& features, Precision precision,
                             const Candidate& candidate) const override;
  // BroEllFeatures, with hyb_ell_width CudaHybRules::bell_garland_ell_width(common).
  std::optional<FieldSet> own_features(const CsrMatrix<double>& matrix,
                                       const MatrixFeatures& common) const override;

  // Builds cuda_bro_ell on a CUDA device: the stream, bit widths, slice offsets, values and
  // (BAR) row order built on the host (bro_stream.hpp), copied once; apply() runs one thread per
  // stream row on the device stream. Throws Error(invalid_argument) for a candidate of another
  // format, a layout not in kBroEllChoices, block size not kBroBlockSize or grid_size 0;
  // Error(failed_precondition) on a CPU device; Error(resource_exhausted) when memory runs out.
  static std::unique_ptr<SpmvOperator> build(const CsrMatrix<double>& matrix, Precision precision,
                                             const Candidate& candidate, Device& device);

  static CudaBroEllParams params_of(const Candidate& candidate) {
    return candidate.params.as<CudaBroEllParams>("cuda_bro_ell");
  }
};

}  // namespace spmvd
