#pragma once
// The sorted-rows CSR/ELL strip partition of paper 004 (Sec. 5): the rows are sorted by length,
// descending; a separator at a strip boundary (a strip = the rows that fill the GPU once,
// partition/strip_partition.hpp) cuts them in two; the rows above run as CSR vector (a group of
// csr_threads_per_row lanes per row, cuda_csr_vector's kernel), the rows below as ELL
// (column-major, as wide as the first row below, each row stopping at its own length). Both
// kernels run on the device's stream and write y in the caller's row order through the sort's
// permutation.
//
// "No partition" (separator 0: all ELL; separator = rows: all CSR vector) is not a candidate of
// this format: those are cuda_ell and cuda_csr_vector, candidates of their own. A matrix whose
// rows all have one length, or that holds no more than one strip, offers nothing here.
//
// A composed format (kernels/format_parts.hpp): predicted as its two parts, cuda_csr_vector
// above and cuda_ell below, and its separator chosen against those predictions
// (candidates_chosen_by), as the paper chooses it against its model (Sec. 4.3.1, 4.3.2). The
// ELL part is predicted at the slots its warps walk (sorted rows: a warp walks about its first
// row's length, not the part's width), and each part pays for the sort: the permutation it
// reads and a y sector again per run of consecutive caller rows (BCE's row runs feature). On
// the H100 memory-bound suite (model-accuracy of the 2026-11-24 version 19 run, the same
// measurements) the two took the format's median error from 20.6 to 14.1 % (fp64) and 36.7 to
// 16.5 % (fp32).

#include <array>
#include <cstdint>
#include <tuple>
#include <vector>

#include "kernels/format_rules.hpp"

namespace spmvd {

inline constexpr FormatId kCudaStripFormatId{15};

// The two versions the benchmark compares (CudaStripParams::variant).
enum class StripVariant : std::uint32_t {
  // Paper 004 as published: the CSR part one warp per row (Table 4's granularity), strips of
  // the rows that one warp per row fills the GPU with (960 on the GTX 295).
  paper = 0,
  // Hopper: the CSR part's lanes per row sized to its rows (any compiled width, 2-32), strips of
  // the rows that fill the GPU at that width (a part of 4-entry rows at 4 lanes fills an H100
  // with 8x the rows of a warp per row); and the longest rows, whose walk by one warp would be
  // the kernel's critical path (block_per_row_min_length), a CUDA block each.
  hopper = 1,
};

// The block size of both parts when nothing chooses it: the middle of cuda_csr_vector's and
// cuda_ell's swept sizes (paper 004 Sec. 6: block size barely matters for ELL).
inline constexpr std::uint32_t kStripDefaultBlockSize = 256;

// Registers per thread of the CSR part's kernel (csr_vector_kernel with PermutedRows), the
// most over the compiled widths and both precisions, as ptxas reports it for sm_90
// (`nvcc -arch=sm_90 -O2 -Xptxas -v` on cuda_strip_operator.cu, CUDA 13.0.88, 2026-11-23: 32
// for fp64 and fp32 at 32 lanes, 40 for fp32 at 2-16 lanes). Only the strip's size depends on
// it, through occupancy (40 registers: 48 resident warps per H100 SM, not 64), so one value
// for both precisions keeps a stored plan's separator valid in either.
inline constexpr int kStripCsrRegistersPerThread = 40;

// cuda_strip's parameters (Candidate::params holds FieldSet::of(them)). candidate.launch stays
// empty: the format launches two kernels, configured here, each over one wave of resident
// blocks (CudaCsrVectorRules::grid_size) on the device it is built on.
struct CudaStripParams {
  std::uint32_t variant = 0;              // StripVariant
  std::int64_t separator = 0;             // rows above (CSR vector): a whole number of strips
  std::uint32_t csr_threads_per_row = 0;  // lanes per row of the CSR part (2-32; paper: 32)
  std::uint32_t csr_block_size = 0;       // one of kCsrVectorBlockSizes
  std::uint32_t ell_block_size = 0;       // one of kEllBlockSizes
  // The first block_rows sorted rows (the longest; within the CSR part) run one block of
  // csr_block_size threads each, the rows [block_rows, separator) csr_threads_per_row lanes
  // each; separator - block_rows is a whole number of strips (0 allowed). Paper: 0.
  std::int64_t block_rows = 0;
  static constexpr auto kFields = std::tuple{
      declare_field("variant", &CudaStripParams::variant),
      declare_field("separator", &CudaStripParams::separator),
      declare_field("csr_threads_per_row", &CudaStripParams::csr_threads_per_row),
      declare_field("csr_block_size", &CudaStripParams::csr_block_size),
      declare_field("ell_block_size", &CudaStripParams::ell_block_size),
      declare_field("block_rows", &CudaStripParams::block_rows)};
  friend bool operator==(const CudaStripParams&, const CudaStripParams&) = default;
};

// Rows [first_row, first_row + rows) of the length-sorted (descending) matrix, from the DF
// alone: their own DF (non-empty lengths, ascending), their empty rows, non-zeros and width
// (the length of their first row).
struct SortedRowRange {
  std::vector<RowLengthCount> distribution;
  std::int64_t empty_rows = 0;
  std::int64_t nnz = 0;
  std::int64_t width = 0;
  friend bool operator==(const SortedRowRange&, const SortedRowRange&) = default;
};
// Throws Error(invalid_argument) when the range is not inside [0, features.rows] or the DF does
// not add up to features.rows - features.empty_rows rows.
SortedRowRange sorted_row_range(const MatrixFeatures& features, std::int64_t first_row,
                                std::int64_t rows);

// The row length above which the hopper variant gives a row a block of `block_size` threads
// instead of a warp. Why: with every resident warp of the device busy (W = strip_rows(device,
// 32, block_size): one warp a row fills the GPU with W rows), the matrix streams in the time one
// warp walks its even share, ceil(nnz / W) entries; a warp walking a longer row alone is still
// walking when the rest has finished, and does not speed up then (its bytes in flight are its
// 32 lanes' loads, a small part of what an SM needs to cover the memory latency), so that row
// is the critical path (circuit-3M on an H100: 50 rows of 50,000 entries, 1,560 dependent
// 32-wide steps a warp, 0.835 ms against cuSPARSE's 0.120). A block of B threads walks it in
// ceil(length / B) steps. Rows no longer than B keep their warp (a block's lanes would idle).
// Returns max(block_size, ceil(nnz / W)); throws Error(invalid_argument) on negative nnz or a
// device where the kernel cannot launch.
std::int64_t block_per_row_min_length(std::int64_t nnz, const DeviceInfo& device,
                                      std::uint32_t block_size);

// How the block kernel tiles a row of `length` entries over a block of `block_size` threads:
// thread k takes entries k, k + B, k + 2B, ... (coalesced), so warp j of the block walks the
// entries whose index mod B lies in [32j, 32j + 32): a warp-per-row walk of its share. Returns
// the DF of the warps' shares (non-empty ones, ascending): the rows a cuda_csr_vector part at
// 32 lanes walks in the same steps, which is how parts() predicts the block rows (their
// critical path: the longest share). Throws Error(invalid_argument) on a negative length or a
// block size that is not a positive multiple of 32.
std::vector<RowLengthCount> block_row_warp_shares(std::int64_t length, std::uint32_t block_size);

class CudaStripRules final : public FormatRules {
 public:
  FormatId id() const noexcept override { return kCudaStripFormatId; }
  std::string_view name() const noexcept override { return "cuda_strip"; }
  bool needs_gpu() const noexcept override { return true; }
  // A composed format: predicted as its parts; "bytes" is only the fallback name.
  std::string_view model_family() const noexcept override { return "bytes"; }

  // On a GPU, when candidates() offers a separator (more rows than one strip, more than one
  // row length, an ELL part within cuda_ell's padding bound), and its smallest candidate's
  // arrays fit the budget.
  bool admissible(const MatrixFeatures& features, const DeviceInfo& device, Precision precision,
                  std::uint64_t memory_budget_bytes) const override;
  // Without models (justified in cuda_strip_rules.cpp): each variant at the strip boundary
  // below the rows of the longest length (on a power-law matrix, the first strip) and at the
  // one where the rows drop below a warp's length (rows that fill a warp's lanes on CSR vector, shorter rows one
  // thread each on ELL), both parts at kStripDefaultBlockSize. The hopper variant runs the rows
  // longer than block_per_row_min_length a block each (block_rows) and also offers the
  // separator right below them. Only separators strictly inside, below which the rows are
  // shorter than the longest, with the ELL part within kEllMaxPaddingRatio slots per non-zero.
  std::vector<Candidate> candidates(const MatrixFeatures& features,
                                    const DeviceInfo& device) const override;
  // Paper 004 Sec. 5's sweep (strip_partition): per variant and CSR width, the separator at
  // the strip boundary whose predicted CSR-vector strips above plus ELL part below is least;
  // then the block size of each part whose predicted time is least. Nothing for a variant where
  // no split beats the better single format (no partition: cuda_ell or cuda_csr_vector wins
  // outright). Where a part cannot be predicted, the model-free candidates of that variant.
  // Plus the model-free candidates with block rows whose parts are predicted less than every
  // candidate chosen before them.
  std::vector<Candidate> candidates_chosen_by(const PartTimePredictor& predictor,
                                              const MatrixFeatures& features,
                                              const DeviceInfo& device) const override;
  // Exact: permutation (rows int32) + CSR part ((separator + 1) int64 offsets + its non-zeros
  // of column index and value) + ELL part (rows below x width slots of column index and value,
  // and a 32-bit length per row).
  std::uint64_t device_bytes(const MatrixFeatures& features, Precision precision,
                             const Candidate& candidate) const override;
  // Structural (check_candidate): the model chooses separators candidates() does not list.
  bool is_valid(const Candidate& candidate, const MatrixFeatures& features,
                const DeviceInfo& device) const override;
  // The CSR-vector part (rows above the separator) as a cuda_csr_vector candidate, and the ELL
  // part (rows below) as a cuda_ell candidate, each with part_features of its sorted rows.
  // Block rows (block_rows > 0) come first, as a cuda_csr_vector part at 32 lanes over their
  // warp shares (block_row_warp_shares: what the block's warps each walk), so their predicted
  // time carries the critical path of the longest share; the warp rows follow when
  // separator > block_rows.
  std::vector<FormatPart> parts(const MatrixFeatures& features,
                                const Candidate& candidate) const override;

  // Rows per strip for a CSR part of `threads_per_row` lanes a row in blocks of `block_size`:
  // strip_rows_from_occupancy at kStripCsrRegistersPerThread. Throws Error(invalid_argument)
  // when the kernel cannot launch on `device`.
  static std::int64_t strip_rows(const DeviceInfo& device, std::uint32_t threads_per_row,
                                 std::uint32_t block_size);
  // Throws Error(invalid_argument) saying what is wrong with `candidate` for this matrix on
  // this device: another format, a launch config (must be empty), an unknown variant, the paper
  // variant at other than 32 lanes, a width or block size that is not compiled, a separator
  // outside (0, rows), block_rows outside [0, separator] or non-zero in the paper variant, or
  // separator - block_rows not a whole number of strips.
  static void check_candidate(const Candidate& candidate, const MatrixFeatures& features,
                              const DeviceInfo& device);

  // Builds cuda_strip on a CUDA device: the stable counting sort of the rows by length
  // (descending), the CSR part and the column-major ELL part with its row lengths
  // (strip_layout.hpp), copied once; apply() launches the block-per-row kernel on the first
  // block_rows rows, the CSR-vector kernel on the rest above the separator and the ELL kernel
  // on the rows below, on the device stream, each writing y[permutation[i]].
  // Structural checks only (any separator in (0, rows), so tests can place it anywhere): throws
  // Error(invalid_argument) for a candidate of another format, a width or block size that is
  // not compiled, a separator outside (0, rows), block_rows outside [0, separator];
  // Error(failed_precondition) on a CPU device;
  // Error(resource_exhausted) when memory runs out.
  static std::unique_ptr<SpmvOperator> build(const CsrMatrix<double>& matrix, Precision precision,
                                             const Candidate& candidate, Device& device);

  // The candidate's CudaStripParams; throws Error(invalid_argument) naming the field a stored
  // plan lacks.
  static CudaStripParams params_of(const Candidate& candidate) {
    return candidate.params.as<CudaStripParams>("cuda_strip");
  }
};

}  // namespace spmvd
