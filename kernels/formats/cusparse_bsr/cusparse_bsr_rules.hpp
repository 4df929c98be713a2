#pragma once
// cuSPARSE generic SpMV on a BSR descriptor (cusparseCreateBsr, CUSPARSE_SPMV_BSR_ALG1,
// row-major blocks, 32-bit indices), built from CSR on the host (bsr_layout.hpp).
// FormatParams.block_dim in {2, 4}; cuSPARSE picks its own launch configuration, so launch is {}.
//
// The fill-in rule: BSR is admissible only while the stored slots (blocks * b^2) stay within
// kBsrMaxFillRatio * nnz for some b. Where the features count the blocks
// (MatrixFeatures::block_counts) the rule is exact, only the block sizes that pass it are
// candidates, and device_bytes is exact. Features without counts (plans stored before model
// version 6, the conformance test's widest space) keep every block size as a candidate and
// fall back on bounds: a lower bound on the slots for admissibility (bsr_slot_lower_bound, a
// necessary condition), an upper bound on the blocks for the bytes. The builder builds whatever
// it is given (the conformance test runs every candidate on every matrix).

#include <array>
#include <cstdint>

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

class CusparseBsrRules final : public FormatRules {
 public:
  FormatId id() const noexcept override { return kCusparseBsrFormatId; }
  std::string_view name() const noexcept override { return "cusparse_bsr"; }
  bool needs_gpu() const noexcept override { return true; }

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
};

}  // namespace spmvd
