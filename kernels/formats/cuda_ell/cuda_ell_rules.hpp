#pragma once
// ELL (Bell & Garland, SC'09, Sec. 3.2): every row padded to the longest one, stored
// column-major (entry j of row r at j*rows + r) so one thread per row reads coalesced. Only
// block_size matters for ELL (paper 004, Sec. 6, Table 5); the grid is one wave of resident
// blocks. FormatParams.ell_width records the width the plan was made for (= longest row).

#include <array>
#include <cstdint>

#include "kernels/format_rules.hpp"

namespace spmvd {

inline constexpr FormatId kCudaEllFormatId{5};

inline constexpr std::array<std::uint32_t, 3> kEllBlockSizes{128, 256, 512};

// ELL is admissible only while rows * width <= kEllMaxPaddingRatio * nnz. Why: each slot costs
// the kernel a column-index read whether it holds an entry or padding, so at ratio P the ELL
// sweep reads P times the indices CSR reads; ELL's only advantage over CSR is coalescing, which
// buys a small constant factor, never 20x. The cap is not a tuned threshold: it only keeps the
// tuner from building and timing a format that is mostly padding (a power-law matrix with one
// dense row), well before the memory budget would stop it.
inline constexpr std::int64_t kEllMaxPaddingRatio = 20;

class CudaEllRules final : public FormatRules {
 public:
  FormatId id() const noexcept override { return kCudaEllFormatId; }
  std::string_view name() const noexcept override { return "cuda_ell"; }
  bool needs_gpu() const noexcept override { return true; }

  // On a GPU, padded slots <= kEllMaxPaddingRatio * nnz, and the arrays within the budget.
  bool admissible(const MatrixFeatures& features, const DeviceInfo& device, Precision precision,
                  std::uint64_t memory_budget_bytes) const override;
  // One candidate per block size, ell_width = the longest row.
  std::vector<Candidate> candidates(const MatrixFeatures& features,
                                    const DeviceInfo& device) const override;
  // rows * ell_width slots of (32-bit column index + value), padding included.
  std::uint64_t device_bytes(const MatrixFeatures& features, Precision precision,
                             const Candidate& candidate) const override;
};

}  // namespace spmvd
