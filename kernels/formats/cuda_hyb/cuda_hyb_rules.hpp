#pragma once
// HYB (Bell & Garland, SC'09, Sec. 3.5): an ELL part of width K (params.ell_width) plus
// the entries beyond K in COO. The ELL kernel computes y = alpha*A_ell*x + beta*y for every row,
// then cuda_coo's segmented kernel adds alpha*A_coo*x. Launch parameters (paper 004, Sec. 6,
// Table 5: HYB tunes Num_Threads and Block_Size): block_size for both kernels, grid_size for
// the COO part as in cuda_coo (entries per thread); the ELL part's grid is one wave of resident
// blocks, derived from (rows, block_size, DeviceInfo).

#include <array>
#include <cstdint>
#include <tuple>
#include <vector>

#include "kernels/build_source.hpp"
#include "kernels/format_rules.hpp"

namespace spmvd {

inline constexpr FormatId kCudaHybFormatId{7};

inline constexpr std::array<std::uint32_t, 3> kHybBlockSizes{128, 256, 512};
inline constexpr std::array<std::uint32_t, 2> kHybCooEntriesPerThread{4, 16};

// Bell & Garland's K rule (SC'09, Sec. 4.2; CUSP's compute_hyb_cols_per_row): ELL pays off for
// a column while at least max(4096, rows/3) rows fill it (ELL is about 3x faster per entry than
// COO; below 4096 rows the ELL launch is not worth it).
inline constexpr std::int64_t kHybBreakevenRows = 4096;
inline constexpr std::int64_t kHybRelativeSpeed = 3;

// cuda_hyb's parameters (Candidate::params holds FieldSet::of(them)).
struct CudaHybParams {
  std::uint32_t ell_width = 0;  // K: entries per row kept in the ELL part
  static constexpr auto kFields = std::tuple{declare_field("ell_width", &CudaHybParams::ell_width)};
  friend bool operator==(const CudaHybParams&, const CudaHybParams&) = default;
};

class CudaHybRules final : public FormatRules {
 public:
  FormatId id() const noexcept override { return kCudaHybFormatId; }
  std::string_view name() const noexcept override { return "cuda_hyb"; }
  bool needs_gpu() const noexcept override { return true; }
  // paper 004: HYB = its ELL part + its COO part.
  std::string_view model_family() const noexcept override { return "hyb"; }

  bool admissible(const MatrixFeatures& features, const DeviceInfo& device, Precision precision,
                  std::uint64_t memory_budget_bytes) const override;
  // ell_width in ell_widths(features), times kHybBlockSizes x kHybCooEntriesPerThread.
  std::vector<Candidate> candidates(const MatrixFeatures& features,
                                    const DeviceInfo& device) const override;
  // rows * K ELL slots of (column index + value) + the COO remainder's entries of (row index +
  // column index + value); the remainder's size is exact from the row-length distribution.
  // Entries of the COO remainder for ELL width K: exact from the distribution; nnz (a bound)
  // for features without one.
  static std::int64_t coo_entry_count(const MatrixFeatures& features, std::int64_t ell_width);
  std::uint64_t device_bytes(const MatrixFeatures& features, Precision precision,
                             const Candidate& candidate) const override;
  // The ELL part's walked slots (cut_ell_walked_width: its kernel is cuda_ell's) and the COO
  // part's entries: what a multiply reads of the arrays, and what the dram_rate bound streams.
  std::uint64_t streamed_bytes(const MatrixFeatures& features, Precision precision,
                               const Candidate& candidate) const override;

  // The largest K such that at least max(kHybBreakevenRows, rows / kHybRelativeSpeed) rows have
  // >= K non-zeros; 0 when no K qualifies (fewer than 4096 rows: all COO).
  static std::int64_t bell_garland_ell_width(const MatrixFeatures& features);
  // The widths swept: the rule's K, round(mean) and ceil(mean + stddev), clamped to
  // [0, longest row], ascending, without duplicates.
  static std::vector<std::int64_t> ell_widths(const MatrixFeatures& features);

  // Builds cuda_hyb (cuda_hyb_rules.hpp) on the source's CUDA device: the ELL part and COO
  // remainder of hyb_layout.hpp built on the device from the shared CSR (device_hyb_layout.hpp)
  // and shared by every launch configuration of one ell_width; apply() runs the ELL kernel
  // (y = alpha*A_ell*x + beta*y on every row), then the segmented COO kernel adds
  // alpha*A_coo*x, both on the device stream.
  // Throws Error(invalid_argument) for a candidate of another format, a block size not in
  // kHybBlockSizes, grid_size 0, or an ell_width above the matrix's longest row;
  // Error(failed_precondition) on a CPU device; Error(resource_exhausted) when memory runs out.
  static std::unique_ptr<SpmvOperator> build(const BuildSource& source, Precision precision,
                                             const Candidate& candidate);

  // The candidate's CudaHybParams; throws Error(invalid_argument) naming the field a stored plan
  // lacks.
  static CudaHybParams params_of(const Candidate& candidate) {
    return candidate.params.as<CudaHybParams>("cuda_hyb");
  }
};

}  // namespace spmvd
