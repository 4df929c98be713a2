#pragma once
// BRO-HYB (paper 001, Tang et al., SC'13, Sec. 3.3): the first K entries of every row in
// BRO-ELL, the rest in BRO-COO, K chosen as HYB chooses it (Bell & Garland's rule,
// CudaHybRules::bell_garland_ell_width; the paper partitions "with the same algorithm as
// [4, 5]"). apply() runs the BRO-ELL kernel (y = alpha*A_ell*x + beta*y on every row, in the
// caller's order also under BAR), then the BRO-COO kernel adds alpha*A_coo*x. Both parts are
// built by the encoders of common/bro_stream.hpp; the ELL part's layouts are cuda_bro_ell's
// (kBroEllChoices), the COO part's interval sizes cuda_bro_coo's.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "kernels/format_rules.hpp"
#include "kernels/formats/cuda_bro_coo/cuda_bro_coo_rules.hpp"
#include "kernels/formats/cuda_bro_ell/cuda_bro_ell_rules.hpp"

namespace spmvd {

inline constexpr FormatId kCudaBroHybFormatId{19};

// cuda_bro_hyb's parameters (Candidate::params holds FieldSet::of(them)).
struct CudaBroHybParams {
  std::uint32_t ell_width = 0;     // K: entries per row in the BRO-ELL part
  std::uint32_t slice_height = 0;  // the BRO-ELL part's CudaBroEllParams
  std::uint32_t variant = 0;
  std::uint32_t reorder = 0;
  std::uint32_t interval_rounds = 0;  // the BRO-COO part's CudaBroCooParams
  static constexpr auto kFields =
      std::tuple{declare_field("ell_width", &CudaBroHybParams::ell_width),
                 declare_field("slice_height", &CudaBroHybParams::slice_height),
                 declare_field("variant", &CudaBroHybParams::variant),
                 declare_field("reorder", &CudaBroHybParams::reorder),
                 declare_field("interval_rounds", &CudaBroHybParams::interval_rounds)};
  friend bool operator==(const CudaBroHybParams&, const CudaBroHybParams&) = default;
  CudaBroEllParams ell() const { return {slice_height, variant, reorder}; }
};

// The sizes of both parts at K = bell_garland_ell_width: the ELL part's for every
// kBroEllChoices entry, the COO part's for every kBroCooIntervalRounds.
struct BroHybFeatures {
  std::int64_t ell_width = 0;
  std::int64_t coo_entries = 0;
  std::vector<std::int64_t> ell_slices;
  std::vector<std::int64_t> ell_stream_words;
  std::vector<std::int64_t> ell_columns;
  std::vector<std::int64_t> ell_value_slots;
  std::vector<std::int64_t> coo_intervals;
  std::vector<std::int64_t> coo_stream_words;
  static constexpr auto kFields =
      std::tuple{declare_field("ell_width", &BroHybFeatures::ell_width),
                 declare_field("coo_entries", &BroHybFeatures::coo_entries),
                 declare_field("ell_slices", &BroHybFeatures::ell_slices),
                 declare_field("ell_stream_words", &BroHybFeatures::ell_stream_words),
                 declare_field("ell_columns", &BroHybFeatures::ell_columns),
                 declare_field("ell_value_slots", &BroHybFeatures::ell_value_slots),
                 declare_field("coo_intervals", &BroHybFeatures::coo_intervals),
                 declare_field("coo_stream_words", &BroHybFeatures::coo_stream_words)};
  friend bool operator==(const BroHybFeatures&, const BroHybFeatures&) = default;
  BroEllFeatures ell() const {
    return {ell_slices, ell_stream_words, ell_columns, ell_value_slots, 0, {}, {}, {}};
  }
  BroCooFeatures coo() const { return {coo_intervals, coo_stream_words}; }
};
// The ELL part's sizes are `ell`'s leading() ones when it was sized at hyb_ell_width ==
// ell_width (cuda_bro_ell's hook walks the slices once for both formats), else they come from a
// walk of its own (compute_bro_ell_features); the COO part's from the trailing entries' row
// offsets (bro_coo_size, no copy of the entries). ELL-part sizes under BAR are an upper bound
// (BroEllFeatures).
BroHybFeatures compute_bro_hyb_features(const CsrMatrix<double>& m, std::int64_t ell_width,
                                        const std::optional<BroEllFeatures>& ell = std::nullopt);
// Throws Error(invalid_argument) "cuda_bro_hyb: reorder 2 (RCM) is not a BRO-HYB layout (...)":
// RCM renumbers columns too, so the COO part would need the permutation as well; it stays
// cuda_bro_ell's. BAR and none are BRO-HYB's.
void check_bro_hyb_reorder(const CudaBroHybParams& params);
// The kind of cuda_bro_hyb's stored BAR order (core/plan_partition.hpp):
// "bar/h<slice_height>/k<ell_width>". BAR clusters the ELL part's rows, the first ell_width
// entries of every row: another structure than the matrix's, so another order than
// cuda_bro_ell's at the same height, and one for each K. Where ell_width reaches the longest
// row the ELL part is the whole matrix and the kind is cuda_bro_ell's (bro_bar_partition_kind):
// the same rows give the same order, and the candidates of both formats share one BAR run.
std::string bro_hyb_bar_partition_kind(std::uint32_t slice_height, std::int64_t ell_width,
                                       std::int64_t longest_row);
// The BAR order of `leading` (bro::leading_entries(source.host(), params.ell_width);
// `longest_row`: source.host()'s longest row) where `choice` reorders by BAR, else null:
// bro_bar_partition under bro_hyb_bar_partition_kind (a stored plan's where it is a permutation
// of the rows, else computed). The operator's partition(), which the plan carries.
std::shared_ptr<const PlanPartition> bro_hyb_bar_partition(const BuildSource& source,
                                                           const CsrMatrix<double>& leading,
                                                           const CudaBroHybParams& params,
                                                           const BroEllChoice& choice,
                                                           std::int64_t longest_row);
// nullopt where the hook did not run; throws Error(invalid_argument) when it does not decode.
std::optional<BroHybFeatures> cuda_bro_hyb_features(const MatrixFeatures& features);

class CudaBroHybRules final : public FormatRules {
 public:
  FormatId id() const noexcept override { return kCudaBroHybFormatId; }
  std::string_view name() const noexcept override { return "cuda_bro_hyb"; }
  bool needs_gpu() const noexcept override { return true; }
  // The bytes model at the bytes both parts move.
  std::string_view model_family() const noexcept override { return "bytes"; }

  bool admissible(const MatrixFeatures& features, const DeviceInfo& device, Precision precision,
                  std::uint64_t memory_budget_bytes) const override;
  // K of its features x kBroEllChoices without RCM x kBroCooIntervalRounds; none without its
  // features.
  std::vector<Candidate> candidates(const MatrixFeatures& features,
                                    const DeviceInfo& device) const override;
  // Both parts' layout bytes (exact; an upper bound under BAR). Throws Error(invalid_argument)
  // without features, for an ell_width other than the features' K, or for parts not offered
  // (RCM: check_bro_hyb_reorder).
  std::uint64_t device_bytes(const MatrixFeatures& features, Precision precision,
                             const Candidate& candidate) const override;
  // BroHybFeatures at CudaHybRules::bell_garland_ell_width(common), reusing cuda_bro_ell's
  // features from `common` when feature extraction computed them (it runs hooks in id order).
  std::optional<FieldSet> own_features(const CsrMatrix<double>& matrix,
                                       const MatrixFeatures& common) const override;
  // Its two launches (kernels/format_parts.hpp): the BRO-ELL part, every row cut to ell_width
  // entries, as cuda_bro_ell's candidate of the same layout and launch, its sizes the features'
  // ELL part; then, where entries are left, the BRO-COO part, those entries of the rows longer
  // than ell_width, as cuda_bro_coo's candidate of the same interval rounds, its sizes the
  // features' COO part. Each pays its own launch: timed as one format, BRO-HYB's records held
  // one BRO-COO launch in their floors, read twice too fast where the COO part's 32-round
  // launch (26 us) was not its record's, and twice too slow where there is no COO part (H100,
  // 2026-11-24, docs/MODELS.md). Empty without its features.
  std::vector<FormatPart> parts(const MatrixFeatures& features,
                                const Candidate& candidate) const override;

  // Builds cuda_bro_hyb on source.device(), a CUDA device, from source.host(); under BAR the
  // ELL part's order is the one the source holds where it is a permutation
  // (bro_hyb_bar_partition: a stored plan's, an earlier candidate's), else computed, and is the
  // operator's partition(), which the plan carries. Throws Error(invalid_argument) for a
  // candidate of another format, an ELL layout not in kBroEllChoices, interval_rounds not in
  // kBroCooIntervalRounds, an ell_width above the longest row, a block size not kBroBlockSize
  // or grid_size 0; Error(failed_precondition) on a CPU device.
  static std::unique_ptr<SpmvOperator> build(const BuildSource& source, Precision precision,
                                             const Candidate& candidate);
  // A host algorithm (the encoders, BAR) all the same: the tuner's build cost
  // (format_registry.hpp).
  static constexpr bool kBuildsOnHost = true;

  static CudaBroHybParams params_of(const Candidate& candidate) {
    return candidate.params.as<CudaBroHybParams>("cuda_bro_hyb");
  }
};

}  // namespace spmvd
