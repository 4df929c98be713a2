#pragma once
// cuSPARSE generic SpMV on a BSR descriptor (cusparseCreateBsr, CUSPARSE_SPMV_BSR_ALG1,
// row-major blocks, 32-bit indices), built from CSR on the host (bsr_layout.hpp).
// params.block_dim in {2, 4}; cuSPARSE picks its own launch configuration, so launch is {}.
//
// The fill-in rule: BSR is admissible only while the stored slots (blocks * b^2) stay within
// kBsrMaxFillRatio * nnz for some b. Where the features count the blocks (its own features,
// cusparse_bsr_features.hpp) the rule is exact, only the block sizes that pass it are
// candidates, and device_bytes is exact. Features without counts (calibration samples, the
// conformance test's widest space) keep every block size as a candidate and
// fall back on bounds: a lower bound on the slots for admissibility (bsr_slot_lower_bound, a
// necessary condition), an upper bound on the blocks for the bytes. The builder builds whatever
// it is given (the conformance test runs every candidate on every matrix).

#include <array>
#include <cstdint>
#include <tuple>

#include "kernels/format_rules.hpp"

namespace spmvd {

inline constexpr FormatId kCusparseBsrFormatId{11};

// cusparseSpMVAlg_t value (cusparse.h; checked by static_assert in the operator).
inline constexpr std::uint32_t kCusparseSpmvBsrAlg1 = 6;
inline constexpr std::array<std::uint32_t, 2> kBsrBlockDims{2, 4};
// At 2x fill-in BSR already streams as many bytes per non-zero as CSR (fp32: 2 * 4 = 4 + 4
// bytes of value + column index; fp64: 2 * 8 > 8 + 4), so its denser block access cannot pay
// for more fill.
inline constexpr std::int64_t kBsrMaxFillRatio = 2;

// cusparse_bsr's parameters (Candidate::params holds FieldSet::of(them)).
struct CusparseBsrParams {
  std::uint32_t library_algorithm = 0;  // cusparseSpMVAlg_t value
  std::uint32_t block_dim = 0;          // block edge
  static constexpr auto kFields =
      std::tuple{declare_field("library_algorithm", &CusparseBsrParams::library_algorithm),
                 declare_field("block_dim", &CusparseBsrParams::block_dim)};
  friend bool operator==(const CusparseBsrParams&, const CusparseBsrParams&) = default;
};

class CusparseBsrRules final : public FormatRules {
 public:
  FormatId id() const noexcept override { return kCusparseBsrFormatId; }
  std::string_view name() const noexcept override { return "cusparse_bsr"; }
  bool needs_gpu() const noexcept override { return true; }
  // no dedicated model: the bytes model, fitted on this format's own samples.
  std::string_view model_family() const noexcept override { return "bytes"; }

  // On a GPU, some candidate fills acceptably and its device_bytes fit the budget.
  bool admissible(const MatrixFeatures& features, const DeviceInfo& device, Precision precision,
                  std::uint64_t memory_budget_bytes) const override;
  // One candidate per block size in kBsrBlockDims; with counted blocks, only those that fill
  // acceptably (may_fill_acceptably).
  std::vector<Candidate> candidates(const MatrixFeatures& features,
                                    const DeviceInfo& device) const override;
  // (block rows + 1) + blocks 32-bit indices and blocks * b^2 values, with the features' block
  // count, else bsr_block_upper_bound; staging copies of x and y when rows or cols is not a
  // multiple of b (cuSPARSE reads and writes whole blocks); CusparseCsrRules::
  // workspace_bound_bytes.
  std::uint64_t device_bytes(const MatrixFeatures& features, Precision precision,
                             const Candidate& candidate) const override;
  // device_bytes without the workspace bound (a guess on the safe side, not bytes it reads).
  std::uint64_t dram_streamed_bytes(const MatrixFeatures& features, Precision precision,
                                    const Candidate& candidate) const override;

  // Fewest slots (blocks * b^2) any BSR form of a matrix with these features can store: a block
  // row holds at least ceil(longest row / b) blocks, minimised over row orders by grouping the
  // rows sorted by length (row_length_distribution.hpp), and at least ceil(nnz / b^2) blocks.
  static std::int64_t bsr_slot_lower_bound(const MatrixFeatures& features, std::int64_t block_dim);
  // Most blocks any BSR form can store: a row of length m meets at most min(m, block cols)
  // blocks (without a distribution: one block per entry), and there are at most block rows *
  // block cols blocks.
  static std::int64_t bsr_block_upper_bound(const MatrixFeatures& features, std::int64_t block_dim);
  // Whether a block size passes the fill-in rule: exactly where the features count its blocks,
  // else its necessary condition (always, without entries).
  static bool may_fill_acceptably(const MatrixFeatures& features, std::int64_t block_dim);

  // CusparseBsrFeatures (cusparse_bsr_features.hpp).
  std::optional<FieldSet> own_features(const CsrMatrix<double>& matrix,
                                       const MatrixFeatures& common) const override;

  // Builds cusparse_bsr (cusparse_bsr_rules.hpp) on a CUDA device: the BSR arrays built on the host
  // (bsr_layout.hpp) copied once, a cuSPARSE handle on the device stream, the BSR descriptor and
  // the SpMV workspace created once. cuSPARSE reads x and writes y in whole blocks, so when rows
  // or cols is not a multiple of block_dim, apply() stages x and y through padded device copies.
  // Throws Error(invalid_argument) for a candidate of another format, a block_dim not in
  // kBsrBlockDims, an algorithm other than BSR ALG1, or more than 2^31 - 1 blocks;
  // Error(failed_precondition) on a CPU device; Error(resource_exhausted) when memory runs out.
  static std::unique_ptr<SpmvOperator> build(const CsrMatrix<double>& matrix, Precision precision,
                                             const Candidate& candidate, Device& device);

  // The candidate's CusparseBsrParams; throws Error(invalid_argument) naming the field a stored
  // plan lacks.
  static CusparseBsrParams params_of(const Candidate& candidate) {
    return candidate.params.as<CusparseBsrParams>("cusparse_bsr");
  }
};

}  // namespace spmvd
