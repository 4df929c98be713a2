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
// reorder (a permutation computed from the structure by the builder, which the plan carries:
// a cache hit loads it instead, bro_ell_order_partition):
//   none;
//   BAR (Sec. 3.4, Algorithm 2, common/bar_reorder.hpp): rows clustered into slices; the kernel
//        writes row i's result to y[order[i]], so y is in the caller's order;
//   RCM (issue 16, partition/rcm_order.hpp): square matrices only; rows and columns renumbered
//        alike (P A P^T), which shortens the deltas and localises the x gathers of a matrix
//        whose numbering scattered its structure. apply() gathers x into a device scratch
//        vector in RCM order (x_perm[i] = x[order[i]]), runs the kernel on it and writes row
//        i's result to y[order[i]] as BAR does: x and y stay in the caller's order.

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "core/plan_partition.hpp"
#include "kernels/build_source.hpp"
#include "kernels/format_rules.hpp"

namespace spmvd {

inline constexpr FormatId kCudaBroEllFormatId{17};

inline constexpr std::uint32_t kBroVariantPaper = 0;
inline constexpr std::uint32_t kBroVariantHopper = 1;
inline constexpr std::uint32_t kBroReorderNone = 0;
inline constexpr std::uint32_t kBroReorderBar = 1;
inline constexpr std::uint32_t kBroReorderRcm = 2;
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
  std::uint32_t reorder = 0;       // kBroReorderNone, kBroReorderBar or kBroReorderRcm
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
// is offered with one thread per row only; 4 threads a row only in the hopper variant. RCM
// renumbers whole rows before they are cut, so it takes the same thread counts as no
// reordering; it is cuda_bro_ell's alone (cuda_bro_hyb, which shares this table, skips it: its
// COO part would need the permutation too).
inline constexpr std::array<BroEllChoice, 16> kBroEllChoices{{
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
    {{256, kBroVariantPaper, kBroReorderRcm}, 1},
    {{256, kBroVariantHopper, kBroReorderRcm}, 1},
    {{256, kBroVariantHopper, kBroReorderRcm}, 4},
    {{32, kBroVariantPaper, kBroReorderRcm}, 1},
    {{32, kBroVariantHopper, kBroReorderRcm}, 1},
    {{32, kBroVariantHopper, kBroReorderRcm}, 4},
}};

// The bound on the longest row relative to the mean (kBroEllMaxLongestToMean): a layout is
// offered only while ceil(row_length_max / threads_per_row) <= kBroEllMaxLongestToMean * nnz /
// rows. Why, from the critical path: a slice's threads decode their stream rows serially
// (Algorithm 1: one symbol, one delta, one x load after another), so the slice holding the
// widest row runs ceil(row_length_max / t) decode steps whatever its other rows hold, while the
// whole matrix streams in about rows * mean / (resident threads) steps a thread. A row of
// L >> mean entries makes that one slice the kernel's time (circuit-like matrices: 50 rows of
// 50,000 among 3M of 2-6 entries take 12.8 ms on an H100 against 0.12 ms for cuSPARSE CSR,
// 2026-11-23). ELL bounds the same shape by its padding (cuda_ell: rows * width <=
// kEllMaxPaddingRatio * nnz, every row padded to the widest); BRO-ELL does not store the
// padding, but its time pays for it, so the same ratio bounds the widest stream row. Beyond it
// cuda_bro_hyb (the long rows' tails in BRO-COO, spread over all threads) is the BRO answer.
inline constexpr std::int64_t kBroEllMaxLongestToMean = 20;
bool bro_ell_critical_path_bounded(const MatrixFeatures& features, std::uint32_t threads_per_row);

// Index of (params, threads_per_row) in kBroEllChoices; throws Error(invalid_argument)
// "<owner>: slice_height 48, variant 0, reorder 0, threads_per_row 1 is not a BRO-ELL layout"
// for any other.
std::size_t bro_ell_choice_index(std::string_view owner, const CudaBroEllParams& params,
                                 std::uint32_t threads_per_row);
// Throws Error(invalid_argument) "<owner>: reorder 2 (RCM) renumbers rows and columns alike and
// needs a square matrix; this one is 300 x 50" for RCM on a matrix that is not square.
void check_bro_ell_reorder(std::string_view owner, const CudaBroEllParams& params,
                           std::int64_t rows, std::int64_t cols);

// The sizes of every layout of kBroEllChoices for the rows of `m` (one entry each): the stream,
// bit_alloc and value slots; and, from the same walk, those of the first hyb_ell_width entries
// of every row (BRO-HYB's ELL part at its K, so cuda_bro_hyb's hook repeats no walk). One
// bro_ell_walk_sizes pass a slice height, parallel over slices, no transformed copy of the
// matrix, no BAR: exact for the layouts without reordering; for BAR the identity order's sizes,
// an upper bound (bar_order keeps a window's order unless its clustering is no larger,
// bar_reorder.hpp), the builder running BAR itself. RCM, where it is sized (rcm_sized; see
// add_bro_rcm_sizes): its order computed here as the builder will (rcm_order is deterministic),
// P A P^T built once and walked once a slice height, so the RCM layouts' sizes are exact, with
// the bandwidth after and the x sectors per non-zero of the RCM order (what its gathers touch,
// for the models' locality and the offer); where it is not sized, every RCM size and field is
// 0 and no RCM layout is offered. The hyb_ sizes of the RCM layouts are 0 (BRO-HYB offers none).
struct BroEllFeatures {
  std::vector<std::int64_t> slices;
  std::vector<std::int64_t> stream_words;
  std::vector<std::int64_t> columns;
  std::vector<std::int64_t> value_slots;
  std::int64_t hyb_ell_width = 0;
  std::vector<std::int64_t> hyb_stream_words;  // the leading entries' (slices: as above)
  std::vector<std::int64_t> hyb_columns;
  std::vector<std::int64_t> hyb_value_slots;
  std::int64_t bandwidth = 0;      // max |row - column| over the entries, in the caller's order
  std::int64_t rcm_sized = 0;      // 1 where the RCM layouts were sized, else 0
  std::int64_t rcm_bandwidth = 0;  // the same of P A P^T in RCM order
  double rcm_sectors_per_nonzero = 0.0;  // MatrixFeatures::x_sectors_per_nonzero of P A P^T
  static constexpr auto kFields = std::tuple{
      declare_field("slices", &BroEllFeatures::slices),
      declare_field("stream_words", &BroEllFeatures::stream_words),
      declare_field("columns", &BroEllFeatures::columns),
      declare_field("value_slots", &BroEllFeatures::value_slots),
      declare_field("hyb_ell_width", &BroEllFeatures::hyb_ell_width),
      declare_field("hyb_stream_words", &BroEllFeatures::hyb_stream_words),
      declare_field("hyb_columns", &BroEllFeatures::hyb_columns),
      declare_field("hyb_value_slots", &BroEllFeatures::hyb_value_slots),
      declare_field("bandwidth", &BroEllFeatures::bandwidth),
      declare_field("rcm_sized", &BroEllFeatures::rcm_sized),
      declare_field("rcm_bandwidth", &BroEllFeatures::rcm_bandwidth),
      declare_field("rcm_sectors_per_nonzero", &BroEllFeatures::rcm_sectors_per_nonzero)};
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
            .hyb_value_slots = {},
            .bandwidth = bandwidth,
            .rcm_sized = rcm_sized,
            .rcm_bandwidth = rcm_bandwidth,
            .rcm_sectors_per_nonzero = rcm_sectors_per_nonzero};
  }
};
// Throws Error(invalid_argument) for a negative hyb_ell_width or a row whose columns are not
// strictly increasing. with_rcm: add_bro_rcm_sizes on a square matrix (unconditionally: the
// tests'); without, the RCM fields and sizes stay 0 (the hook decides with bro_rcm_may_pay;
// cuda_bro_hyb's own walk needs the leading sizes only).
BroEllFeatures compute_bro_ell_features(const CsrMatrix<double>& m, std::int64_t hyb_ell_width,
                                        bool with_rcm = true);
// Sizes the RCM layouts of `f` (computed by compute_bro_ell_features for `m`, a square matrix
// with rows): rcm_order, P A P^T, one walk a slice height, its bandwidth and x sectors; sets
// rcm_sized; returns the order as the builds' partition (kind kBroRcmPartitionKind), so that
// they need not compute it again. Throws Error(invalid_argument) for a matrix that is not square.
std::shared_ptr<const PlanPartition> add_bro_rcm_sizes(const CsrMatrix<double>& m,
                                                       BroEllFeatures& f);
// Is RCM worth sizing at feature time (an O(nnz log) order, a permuted copy and two walks,
// several times the identity's walks)? Only where it could pay, for two physical reasons:
//  - the graph has small neighbourhoods: RCM's level sets, hence its bandwidth, are narrow
//    only where neighbourhoods overlap (meshes, bands, stencils, whatever their numbering); on
//    random and power-law graphs every breadth-first order is wide. Measured by cuda_ehyb's
//    neighbourhood growth (compute_cuda_ehyb_features, sampled: O(0.3 M) steps), at most
//    kEhybMaxNeighbourhoodGrowth (2-D grids 0.29 renumbered or not, bands 0.07, random
//    patterns 0.997, R-MAT 0.91-0.95);
//  - what the best order could save exceeds what the gather certainly costs: every x sector
//    of the caller's order (nnz * x_sectors_per_nonzero * 32 bytes), every stream word above
//    one a stream row and every padding value slot of an identity layout (the most RCM can
//    remove, the largest over the layouts) against the order, the scratch x and
//    bro_rcm_gather_bytes (rows * 80 bytes at fp64). A stencil or band in its own order fails it
//    (the gather costs more than all its sectors); a renumbered mesh passes.
// `f`: the identity layouts' sizes of m (compute_bro_ell_features without RCM).
bool bro_rcm_may_pay(const CsrMatrix<double>& m, const MatrixFeatures& common,
                     const BroEllFeatures& f);
// nullopt where the hook did not run (calibration samples); throws Error(invalid_argument)
// when the entry does not decode or its vectors are not one entry per kBroEllChoices.
std::optional<BroEllFeatures> cuda_bro_ell_features(const MatrixFeatures& features);

// The device bytes of layout `index` of `sizes` for `rows` matrix rows: the stream, one byte of
// bit_alloc per slice column, the value slots, two 64-bit offsets per slice (+1), a 32-bit row
// order under BAR and RCM, and under RCM the scratch x (rows values). What the builder
// allocates, exactly (except BAR's bound).
std::uint64_t bro_ell_layout_bytes(const BroEllFeatures& sizes, std::size_t index,
                                   std::int64_t rows, Precision precision);

// What RCM's x gather and y scatter move every multiply beyond the arrays it occupies (which
// the bytes model already counts as streamed once: the order read, the scratch x written): the
// order read a second time (the kernel's y scatter and the gather both read it), the caller's x
// read in RCM order and y written through the order, a 32-byte sector per row each
// (kXSectorColumns fp32 columns), since the caller's numbering is what RCM undoes and may be
// random: rows * (4 + 2 * 32) bytes. (The y sector was added after the H200 measured the
// renumbered 5-point stencil's RCM layout at 0.67x ALG1: docs/BENCHMARKS.md.)
std::uint64_t bro_rcm_gather_bytes(std::int64_t rows);

// The stream rows a choice encodes: the rows in BAR order, or P A P^T in RCM order (when
// asked: `given` where given, the caller having checked it is a permutation of the rows, else
// bar_order(m, slice height) or rcm_order(m)), each cut into threads_per_row sub-rows. `order`
// receives the order (empty without reordering). Throws as check_bro_ell_reorder does, and as
// permute_rows / permute_symmetric do for a `given` that is not a permutation.
CsrMatrix<double> bro_ell_stream_rows(const CsrMatrix<double>& m, const BroEllChoice& choice,
                                      std::vector<std::int32_t>& order,
                                      std::span<const std::int32_t> given = {});

// The kind of cuda_bro_ell's stored RCM order (core/plan_partition.hpp): a permutation of the
// rows, the rcm_order of the structure.
inline constexpr std::string_view kBroRcmPartitionKind = "rcm";
// The RCM order of source.host() (square): the one the source holds (a stored plan's, offered
// on a cache hit, or an earlier RCM candidate's) where it is a permutation of the rows; else
// rcm_order's (Boost.Graph, timed and logged), which the source then holds. Throws
// Error(invalid_argument) for a matrix that is not square.
std::shared_ptr<const PlanPartition> bro_ell_rcm_partition(const BuildSource& source);

// The kind of a stored BAR order of whole rows (core/plan_partition.hpp): a permutation of the
// rows, bar_order(m, slice_height). bar_order's result depends on the structure (the
// fingerprint keys the plan), the slice height and the rows it is given, so the kind names the
// height, "bar/h<slice_height>": an order of another height is never used. cuda_bro_hyb, whose
// BAR clusters only its ELL part's entries, names its own (bro_hyb_bar_partition_kind). The
// window of bar_reorder.hpp is the algorithm's constant, not an input, as RCM's start vertex
// is: any permutation gives a correct layout, BAR's one no larger than the identity's.
std::string bro_bar_partition_kind(std::uint32_t slice_height);
// The BAR order of `rows` (source.host(), or the leading entries of its rows) at
// `slice_height`: the one the source holds under `kind` (bro_bar_partition_kind or
// bro_hyb_bar_partition_kind: a stored plan's, offered on a cache hit, or an earlier BAR
// candidate's of that kind) where it is a permutation of the rows; else bar_order's (timed and
// logged), which the source then holds.
std::shared_ptr<const PlanPartition> bro_bar_partition(const BuildSource& source,
                                                       const CsrMatrix<double>& rows,
                                                       std::string_view kind,
                                                       std::uint32_t slice_height);
// The order a choice's build of source.host() runs in: RCM's (bro_ell_rcm_partition), BAR's
// at its slice height (bro_bar_partition of the whole rows), null without reordering. The
// operator's partition(), which the plan carries.
std::shared_ptr<const PlanPartition> bro_ell_order_partition(const BuildSource& source,
                                                             const BroEllChoice& choice);

// Does layout `index` (an RCM layout) move fewer bytes than the same layout in the caller's
// order? Each side: its device bytes at fp64 (RCM's with bro_rcm_gather_bytes) + its x gathers,
// nnz * sectors per non-zero * 32 bytes (the caller's order: MatrixFeatures'
// x_sectors_per_nonzero; RCM's: rcm_sectors_per_nonzero). The physical case for RCM: shorter
// deltas and fewer x sectors must pay for the gather. Counted at fp64, since one candidate
// serves both precisions (the stream and the sectors, what RCM saves, are the same in both).
// False where RCM was not sized (rcm_sized 0).
bool bro_rcm_moves_fewer_bytes(const MatrixFeatures& features, const BroEllFeatures& own,
                               std::size_t index);

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
  // One candidate per kBroEllChoices entry whose widest stream row is within
  // kBroEllMaxLongestToMean of the mean (bro_ell_critical_path_bounded; block kBroBlockSize,
  // one wave of blocks); the RCM layouts only on square matrices and where
  // bro_rcm_moves_fewer_bytes; none without its features.
  std::vector<Candidate> candidates(const MatrixFeatures& features,
                                    const DeviceInfo& device) const override;
  // bro_ell_layout_bytes of the candidate's layout: exact, an upper bound under BAR (see
  // BroEllFeatures); under RCM + bro_rcm_gather_bytes, since the bytes family reads device
  // bytes as what one multiply streams (models/families/bytes/bytes_model.hpp), so the figure
  // is what the builder allocates plus the gather's per-multiply reads. Throws
  // Error(invalid_argument) for a layout not in kBroEllChoices, RCM on a matrix that is not
  // square (check_bro_ell_reorder) or whose features did not size it, or without features.
  std::uint64_t device_bytes(const MatrixFeatures& features, Precision precision,
                             const Candidate& candidate) const override;
  // A stored plan is valid where its layout is one of candidates()' without the RCM offer
  // (bro_rcm_moves_fewer_bytes chooses what to try, not what may run): an RCM plan on any
  // square matrix whose features sized RCM (every matrix this build offered RCM on: the
  // features are a function of the matrix), never on another.
  bool is_valid(const Candidate& candidate, const MatrixFeatures& features,
                const DeviceInfo& device) const override;
  // The x sectors per non-zero the candidate's kernel gathers: RCM's own order
  // (BroEllFeatures::rcm_sectors_per_nonzero), else the matrix's.
  double gather_sectors_per_nonzero(const MatrixFeatures& features,
                                    const Candidate& candidate) const override;
  // BroEllFeatures, with hyb_ell_width CudaHybRules::bell_garland_ell_width(common); RCM is
  // not sized (no RCM candidate is offered).
  std::optional<FieldSet> own_features(const CsrMatrix<double>& matrix,
                                       const MatrixFeatures& common) const override;
  // The same with the RCM layouts sized where bro_rcm_may_pay (a feature pass of
  // FeatureEffort::thorough: computing the order costs hundreds of standard passes), and the
  // RCM order it computed for the builds.
  std::optional<ThoroughOwnFeatures> thorough_own_features(
      const CsrMatrix<double>& matrix, const MatrixFeatures& common) const override;

  // Builds cuda_bro_ell on source.device(), a CUDA device: the stream, bit widths, slice
  // offsets, values and (BAR, RCM) order built on the host (bro_stream.hpp), copied once; the
  // BAR or RCM order is the one the source holds where it is a permutation
  // (bro_ell_order_partition: a stored plan's, an earlier candidate's), else computed, and is
  // the operator's partition(), which the plan carries; apply() runs one thread per
  // stream row on the device stream (under RCM after the x gather, on the same stream). Throws
  // Error(invalid_argument) for a candidate of another format, a layout not in kBroEllChoices,
  // RCM on a matrix that is not square, block size not kBroBlockSize or grid_size 0;
  // Error(failed_precondition) on a CPU device; Error(resource_exhausted) when memory runs out.
  static std::unique_ptr<SpmvOperator> build(const BuildSource& source, Precision precision,
                                             const Candidate& candidate);
  // A host algorithm (the encoders, BAR, RCM) all the same: the tuner's build cost
  // (format_registry.hpp).
  static constexpr bool kBuildsOnHost = true;

  static CudaBroEllParams params_of(const Candidate& candidate) {
    return candidate.params.as<CudaBroEllParams>("cuda_bro_ell");
  }
};

}  // namespace spmvd
