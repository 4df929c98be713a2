#pragma once
// BCE, the blocked CSR/ELL format of paper 000 (Yang, Li, Li, JCSS 2018; Secs. 4-6): the rows
// are grouped by length into k blocks of consecutive row vector sets, chosen by the optimal
// partitioning algorithm OPA (Sec. 5.5, partition/opa.hpp), reordered by Algorithm 3 and stored
// block by block as ELL, column-major as the paper stores it or, for the rows the hopper
// variant shares between lanes, interleaved for those lanes (bce_layout.hpp); one kernel launch
// covers every block (Algorithm 4), y is scattered back through rowNo.
//
// A composed format (kernels/format_parts.hpp): each block is predicted as the part it runs as
// (block_part in cuda_bce_rules.cpp: cuda_ell for the blocks of 1-4 lanes a row,
// cuda_csr_vector with 32 lanes for the warp- and block-per-row blocks of the hopper variant),
// so BCE needs no model family of its own ("bytes" names the fallback), and
// candidates_chosen_by runs OPA with T_c(C_i) = the calibrated time of block C_i's part.

#include <array>
#include <cstdint>
#include <tuple>
#include <vector>

#include "kernels/format_rules.hpp"
#include "kernels/formats/cuda_bce/bce_layout.hpp"
#include "kernels/formats/cuda_bce/bce_row_runs.hpp"

namespace spmvd {

inline constexpr FormatId kCudaBceFormatId{14};

inline constexpr std::array<std::uint32_t, 3> kBceBlockSizes{128, 256, 512};

// OPA against the part predictor runs over at most this many groups of consecutive row vector
// sets (equal numbers of sets per group; exact where M' <= this). Why: every T_c evaluation is a
// model prediction over the block's DF slice, and the general-cost DP (no quadrangle
// inequality can be proved for a fitted model) takes O(G^2) of them: 128 groups are 8256
// predictions, M' = 3000 sets of a power-law matrix would be 4.5M.
inline constexpr std::int64_t kBceMaxPredictedGroups = 128;

// cuda_bce's parameters (Candidate::params holds FieldSet::of(them)). The CUDA block size is
// the candidate's launch.block_size (one of kBceBlockSizes) and launch.grid_size the number of
// tiles (bce_tile_count), as for every catalogue format.
struct CudaBceParams {
  // OPA's M_1 < ... < M_{k-1}: the width of each block but the last (whose width is the
  // longest row). Each is the length of a non-empty row vector set. Empty: one block.
  std::vector<std::int64_t> boundaries;
  std::int64_t variant = static_cast<std::int64_t>(BceVariant::paper);  // BceVariant
  // The device's bce_resident_threads when the candidate was chosen: the hopper variant's lanes
  // per row (bce_lanes_per_row) depend on it, and a stored plan must tile, build and be
  // predicted (parts) as it was chosen. >= 0; 0 never widens past 4 lanes.
  std::int64_t resident_threads = 0;
  static constexpr auto kFields =
      std::tuple{declare_field("boundaries", &CudaBceParams::boundaries),
                 declare_field("variant", &CudaBceParams::variant),
                 declare_field("resident_threads", &CudaBceParams::resident_threads)};
  friend bool operator==(const CudaBceParams&, const CudaBceParams&) = default;
};

class CudaBceRules final : public FormatRules {
 public:
  FormatId id() const noexcept override { return kCudaBceFormatId; }
  std::string_view name() const noexcept override { return "cuda_bce"; }
  bool needs_gpu() const noexcept override { return true; }
  // Predicted as its parts (parts()); "bytes" is the fallback without a calibration.
  std::string_view model_family() const noexcept override { return "bytes"; }

  // On a GPU, fewer than 2^31 rows (rowNo and the tile table are 32-bit), and the smallest
  // candidate's bytes (device_bytes) within the budget. No padding cap as ELL's: OPA's blocks
  // pay for padding in their own cost, and device_bytes counts it against the budget.
  bool admissible(const MatrixFeatures& features, const DeviceInfo& device, Precision precision,
                  std::uint64_t memory_budget_bytes) const override;
  // Model-free (no calibration): the boundaries of OPA with the paper's Sec. 5.3 cost
  // (BlockedEllBlockCost, exact in O(M' log M')) where L = the threads one SM keeps resident
  // (max_threads_per_sm; why not the whole GPU's: cuda_bce_rules.cpp) and f_p a constant
  // (every slot moves the same bytes, so f_p scales every block alike and leaves the argmin
  // alone); one candidate per variant and block size, and where OPA splits the rows the hopper
  // variant of the one-block partition too where its padding stays within cuda_ell's bound
  // (with_one_block in cuda_bce_rules.cpp says why).
  std::vector<Candidate> candidates(const MatrixFeatures& features,
                                    const DeviceInfo& device) const override;
  // OPA with T_c(C_i) = predictor.part_ms of block C_i's hopper part (block size 256) as its
  // layout stores it (padded to W(C_i), one lane a row: a merge's padding is built and held
  // even where the kernel skips it), over at most kBceMaxPredictedGroups groups of sets,
  // O(G^2) predictions, no cap on k (one launch covers every block, so k costs only what the
  // parts' predictions say). Falls back to candidates() where the predictor cannot say. Same
  // variants and block sizes, and the same one-block hopper candidates beside them.
  std::vector<Candidate> candidates_chosen_by(const PartTimePredictor& predictor,
                                              const MatrixFeatures& features,
                                              const DeviceInfo& device) const override;
  // Slots (each block's rows x its width padded to a multiple of its lanes, as make_bce_layout
  // lays it out) * (column index + value) + rowNo + (hopper) row lengths + the tile table
  // ((hopper) with each tile's row base) and the per-block arrays.
  std::uint64_t device_bytes(const MatrixFeatures& features, Precision precision,
                             const Candidate& candidate) const override;
  // Structural (check_candidate): a stored plan with model-chosen boundaries revalidates
  // without being one of candidates().
  bool is_valid(const Candidate& candidate, const MatrixFeatures& features,
                const DeviceInfo& device) const override;
  // Each block as the part it runs as (bce_lanes_per_row with the candidate's resident_threads):
  // 1-4 lanes a row a cuda_ell part, one CUDA block per block_size / L rows: a paper block its
  // DF slice at ell_width W(C_i); a hopper block, whose rows stop at their own lengths, L
  // one-lane rows of ceil(length / L) a row, at the width its warps walk (the expected longest
  // of a warp's 32 / L rows); a warp per row a cuda_csr_vector part of 32 lanes over the
  // same DF slice; a CUDA block per row a cuda_csr_vector part of 32 lanes over the block's rows
  // each cut into block_size / 32 pieces (ceil(length / pieces) long; the chain each lane walks,
  // W / block_size). Every part shares the one launch (FormatPart::launch) and carries the
  // reordering's bytes: row lengths, rowNo and the y sectors its runs of rows write again
  // (FormatPart::row_map_bytes, scattered_row_runs; bce_row_runs.hpp). The empty rows are no
  // part (their y writes are a y sweep the parts do not model).
  std::vector<FormatPart> parts(const MatrixFeatures& features,
                                const Candidate& candidate) const override;
  // The hopper variant's one-block partition at each block size: on a sample whose longest row
  // reaches kBceBlockPerRowMinWidth with fewer rows than the GPU has warps, every row a CUDA
  // block (bce_lanes_per_row).
  std::vector<Candidate> row_block_candidates(const MatrixFeatures& features,
                                              const DeviceInfo& device) const override;
  // The runs of consecutive rows of each length (bce_row_runs.hpp): what the blocks' y writes
  // through rowNo cost (parts()).
  std::optional<FieldSet> own_features(const CsrMatrix<double>& matrix,
                                       const MatrixFeatures& common) const override;

  // Throws Error(invalid_argument) saying what is wrong with `candidate` for a matrix of these
  // features: another format, undecodable params, a variant that is neither 0 (paper) nor 1
  // (hopper), a block size not in kBceBlockSizes, threads_per_row other than 1, boundaries that
  // are not ascending lengths of non-empty row vector sets below the longest row, a negative
  // resident_threads, or a grid_size other than bce_tile_count.
  static void check_candidate(const Candidate& candidate, const MatrixFeatures& features);

  // Builds cuda_bce on a CUDA device: the layout built on the host (make_bce_layout), copied
  // once; apply() is one kernel launch over the tiles. Throws Error(invalid_argument) as
  // check_candidate (against the matrix), Error(failed_precondition) on a CPU device,
  // Error(resource_exhausted) when memory runs out.
  static std::unique_ptr<SpmvOperator> build(const CsrMatrix<double>& matrix, Precision precision,
                                             const Candidate& candidate, Device& device);

  // The candidate's CudaBceParams; throws Error(invalid_argument) naming the field a stored plan
  // lacks or the variant it does not know.
  static CudaBceParams params_of(const Candidate& candidate);
};

}  // namespace spmvd
