#pragma once
// ELL (Bell & Garland, SC'09, Sec. 3.2): every row padded to the longest one, stored
// column-major (entry j of row r at j*rows + r) so one thread per row reads coalesced. Only
// block_size matters for ELL (paper 004, Sec. 6, Table 5); the grid is one wave of resident
// blocks. params.ell_width records the width the plan was made for (= longest row).

#include <array>
#include <cstdint>
#include <tuple>

#include "kernels/build_source.hpp"
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

// cuda_ell's parameters (Candidate::params holds FieldSet::of(them)).
struct CudaEllParams {
  std::uint32_t ell_width = 0;  // entries per row: the longest row, which the plan was made for
  static constexpr auto kFields = std::tuple{declare_field("ell_width", &CudaEllParams::ell_width)};
  friend bool operator==(const CudaEllParams&, const CudaEllParams&) = default;
};

class CudaEllRules final : public FormatRules {
 public:
  FormatId id() const noexcept override { return kCudaEllFormatId; }
  std::string_view name() const noexcept override { return "cuda_ell"; }
  bool needs_gpu() const noexcept override { return true; }
  // paper 004 Sec. 4.3.2, fitted on this kernel.
  std::string_view model_family() const noexcept override { return "ell"; }

  // On a GPU, padded slots <= kEllMaxPaddingRatio * nnz, and the arrays within the budget.
  bool admissible(const MatrixFeatures& features, const DeviceInfo& device, Precision precision,
                  std::uint64_t memory_budget_bytes) const override;
  // One candidate per block size, ell_width = the longest row.
  std::vector<Candidate> candidates(const MatrixFeatures& features,
                                    const DeviceInfo& device) const override;
  // rows * ell_width slots of (32-bit column index + value), padding included.
  std::uint64_t device_bytes(const MatrixFeatures& features, Precision precision,
                             const Candidate& candidate) const override;
  // The slots its warps walk (ell_walked_width: a row stops with the group of four holding its
  // first padding slot, a warp with its longest row) x (column index + value): what a multiply
  // reads of the arrays, and what the dram_rate bound streams.
  std::uint64_t streamed_bytes(const MatrixFeatures& features, Precision precision,
                               const Candidate& candidate) const override;

  // Builds cuda_ell (cuda_ell_rules.hpp) on the source's CUDA device: the column-major ELL
  // arrays (ell_layout.hpp) built on the device from the shared CSR as SELL of one slice
  // (common/device_sell.hpp), shared by every block size; apply() launches one thread per row
  // on the device stream. Throws Error(invalid_argument) for a candidate of another format, a
  // block size not in kEllBlockSizes, grid_size 0, or an ell_width other than the matrix's
  // longest row; Error(failed_precondition) on a CPU device; Error(resource_exhausted) when
  // memory runs out.
  static std::unique_ptr<SpmvOperator> build(const BuildSource& source, Precision precision,
                                             const Candidate& candidate);

  // The candidate's CudaEllParams; throws Error(invalid_argument) naming the field a stored plan
  // lacks.
  static CudaEllParams params_of(const Candidate& candidate) {
    return candidate.params.as<CudaEllParams>("cuda_ell");
  }
};

}  // namespace spmvd
