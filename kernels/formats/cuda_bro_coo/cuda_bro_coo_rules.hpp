#pragma once
// BRO-COO (paper 001, Tang et al., SC'13, Sec. 3.2, Fig. 2): COO whose row indices are
// delta-encoded and bit-packed per interval of 32 * interval_rounds entries (one width per
// interval), one warp an interval: lane l takes the interval's entries l, l+32, ..., decodes
// their rows from its own multiplexed stream (the deltas down its column of the interval's
// 2-D view) and the warp adds them with cuda_coo's segmented shuffle reduction. Column indices
// and values are COO's (the paper compresses only the row indices in BRO-COO).
// Layout: common/bro_stream.hpp; kernel: common/bro_stream.cuh.

#include <array>
#include <cstdint>
#include <optional>
#include <tuple>
#include <vector>

#include "kernels/format_rules.hpp"

namespace spmvd {

inline constexpr FormatId kCudaBroCooFormatId{18};

// Rounds of 32 entries per interval: 8 (256 entries, narrow widths, more intervals) and 32
// (1024 entries, CUSP's order of interval per warp).
inline constexpr std::array<std::uint32_t, 2> kBroCooIntervalRounds{8, 32};
inline constexpr std::uint32_t kBroCooBlockSize = 256;

// cuda_bro_coo's parameters (Candidate::params holds FieldSet::of(them)).
struct CudaBroCooParams {
  std::uint32_t interval_rounds = 0;  // an interval is 32 * interval_rounds entries
  static constexpr auto kFields =
      std::tuple{declare_field("interval_rounds", &CudaBroCooParams::interval_rounds)};
  friend bool operator==(const CudaBroCooParams&, const CudaBroCooParams&) = default;
};

// The exact sizes of the BRO-COO layout of a matrix for each kBroCooIntervalRounds (one entry
// each). O(nnz) each.
struct BroCooFeatures {
  std::vector<std::int64_t> intervals;
  std::vector<std::int64_t> stream_words;
  static constexpr auto kFields =
      std::tuple{declare_field("intervals", &BroCooFeatures::intervals),
                 declare_field("stream_words", &BroCooFeatures::stream_words)};
  friend bool operator==(const BroCooFeatures&, const BroCooFeatures&) = default;
};
BroCooFeatures compute_bro_coo_features(const CsrMatrix<double>& m);
// nullopt where the hook did not run; throws Error(invalid_argument) when the entry does not
// decode or its vectors are not one entry per kBroCooIntervalRounds.
std::optional<BroCooFeatures> cuda_bro_coo_features(const MatrixFeatures& features);
// Index of interval_rounds in kBroCooIntervalRounds; throws Error(invalid_argument)
// "<owner>: interval_rounds 5 is not one of 8, 32".
std::size_t bro_coo_rounds_index(std::string_view owner, std::uint32_t interval_rounds);
// Device bytes of a BRO-COO layout of `entries` entries with sizes[index]: the stream, per
// interval a first row, a last row (32-bit), a width (8-bit) and a 64-bit word offset (+1), and
// per entry a 32-bit column and a value.
std::uint64_t bro_coo_layout_bytes(const BroCooFeatures& sizes, std::size_t index,
                                   std::int64_t entries, Precision precision);

class CudaBroCooRules final : public FormatRules {
 public:
  FormatId id() const noexcept override { return kCudaBroCooFormatId; }
  std::string_view name() const noexcept override { return "cuda_bro_coo"; }
  bool needs_gpu() const noexcept override { return true; }
  // The bytes model at the bytes BRO-COO moves (its compressed device_bytes).
  std::string_view model_family() const noexcept override { return "bytes"; }

  bool admissible(const MatrixFeatures& features, const DeviceInfo& device, Precision precision,
                  std::uint64_t memory_budget_bytes) const override;
  // One candidate per kBroCooIntervalRounds (block kBroCooBlockSize, a warp per interval);
  // none without its features.
  std::vector<Candidate> candidates(const MatrixFeatures& features,
                                    const DeviceInfo& device) const override;
  // bro_coo_layout_bytes (exact). Throws Error(invalid_argument) without features or for
  // interval_rounds not in kBroCooIntervalRounds.
  std::uint64_t device_bytes(const MatrixFeatures& features, Precision precision,
                             const Candidate& candidate) const override;
  std::optional<FieldSet> own_features(const CsrMatrix<double>& matrix,
                                       const MatrixFeatures& common) const override;

  // Builds cuda_bro_coo on a CUDA device; apply() scales y by beta, then the BRO-COO kernel adds
  // alpha*A*x, on the device stream. Throws Error(invalid_argument) for a candidate of another
  // format, interval_rounds not in kBroCooIntervalRounds, a block size not kBroCooBlockSize or
  // grid_size 0; Error(failed_precondition) on a CPU device.
  static std::unique_ptr<SpmvOperator> build(const CsrMatrix<double>& matrix, Precision precision,
                                             const Candidate& candidate, Device& device);

  static CudaBroCooParams params_of(const Candidate& candidate) {
    return candidate.params.as<CudaBroCooParams>("cuda_bro_coo");
  }
};

}  // namespace spmvd
