#pragma once
// COO with a segmented reduction (Bell & Garland, SC'09, Sec. 3.4): entries sorted by row;
// each warp owns an interval of entries, reduces it 32 entries at a time with a warp-shuffle
// segmented scan, and writes each finished row once; only the first and last row of a warp's
// interval, which a neighbouring warp may share, are combined with an atomic add. y = beta*y
// runs first as a separate pass.
//
// Launch parameters: block_size, and entries per thread E, which is carried by grid_size =
// ceil(nnz / (block_size * E)) (paper 004, Sec. 6: for COO the number of threads is what
// matters). The kernel derives each warp's interval from the grid, so any grid is correct.

#include <array>
#include <cstdint>

#include "kernels/build_source.hpp"
#include "kernels/format_rules.hpp"

namespace spmvd {

inline constexpr FormatId kCudaCooFormatId{6};

inline constexpr std::array<std::uint32_t, 3> kCooBlockSizes{128, 256, 512};
inline constexpr std::array<std::uint32_t, 3> kCooEntriesPerThread{2, 8, 32};

class CudaCooRules final : public FormatRules {
 public:
  FormatId id() const noexcept override { return kCudaCooFormatId; }
  std::string_view name() const noexcept override { return "cuda_coo"; }
  bool needs_gpu() const noexcept override { return true; }
  // paper 004 Sec. 4.3.3, fitted on this kernel.
  std::string_view model_family() const noexcept override { return "coo"; }

  bool admissible(const MatrixFeatures& features, const DeviceInfo& device, Precision precision,
                  std::uint64_t memory_budget_bytes) const override;
  // kCooBlockSizes x kCooEntriesPerThread (duplicate grids of tiny matrices dropped).
  std::vector<Candidate> candidates(const MatrixFeatures& features,
                                    const DeviceInfo& device) const override;
  // nnz * (32-bit row index + 32-bit column index + value).
  std::uint64_t device_bytes(const MatrixFeatures& features, Precision precision,
                             const Candidate& candidate) const override;

  // ceil(entries / (block_size * entries_per_thread)), at least 1.
  static std::uint32_t grid_size(std::int64_t entries, std::uint32_t block_size,
                                 std::uint32_t entries_per_thread);

  // Builds cuda_coo (cuda_coo_rules.hpp) on source.device(), a CUDA device: the row-sorted COO
  // arrays are the source's device CSR columns and values (shared, not copied) and 32-bit row
  // indices expanded from its offsets on the device, once per source
  // (common/csr_derived_arrays.hpp); apply() runs y = beta*y, then the segmented-reduction
  // kernel (common/segmented_coo_kernel.cuh) on the device stream.
  // Throws Error(invalid_argument) for a candidate of another format, a block size not in
  // kCooBlockSizes, grid_size 0 or rows >= 2^31; Error(failed_precondition) on a CPU device;
  // Error(resource_exhausted) when device memory runs out.
  static std::unique_ptr<SpmvOperator> build(const BuildSource& source, Precision precision,
                                             const Candidate& candidate);
};

}  // namespace spmvd
