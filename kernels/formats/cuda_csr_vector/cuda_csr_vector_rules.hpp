#pragma once
// CSR vector kernel (Bell & Garland's "CSR (vector)"): a group of threads_per_row lanes of one
// warp reduces one row with warp shuffles. threads_per_row is a template parameter of the
// kernel (compiled variants kCsrVectorThreadsPerRow); block_size is a launch parameter; the grid
// is a grid-stride loop whose size is derived from (rows, DeviceInfo), so it is concrete.

#include <array>
#include <cstdint>

#include "kernels/build_source.hpp"
#include "kernels/format_rules.hpp"

namespace spmvd {

inline constexpr FormatId kCudaCsrVectorFormatId{2};

// The compiled threads-per-row variants (1, the scalar kernel, is the cuda_csr_scalar format).
inline constexpr std::array<std::uint32_t, 5> kCsrVectorThreadsPerRow{2, 4, 8, 16, 32};
inline constexpr std::array<std::uint32_t, 3> kCsrVectorBlockSizes{128, 256, 512};

class CudaCsrVectorRules final : public FormatRules {
 public:
  FormatId id() const noexcept override { return kCudaCsrVectorFormatId; }
  std::string_view name() const noexcept override { return "cuda_csr_vector"; }
  bool needs_gpu() const noexcept override { return true; }
  // paper 004 Sec. 4.3.1, calibrated per threads_per_row 2-32.
  std::string_view model_family() const noexcept override { return "csr_vector"; }

  bool admissible(const MatrixFeatures& features, const DeviceInfo& device, Precision precision,
                  std::uint64_t memory_budget_bytes) const override;
  // threads_per_row pruned to [mean / 32, 2 * mean] (never empty), times every block size.
  std::vector<Candidate> candidates(const MatrixFeatures& features,
                                    const DeviceInfo& device) const override;
  // (rows + 1) 64-bit offsets + nnz 32-bit column indices + nnz values.
  std::uint64_t device_bytes(const MatrixFeatures& features, Precision precision,
                             const Candidate& candidate) const override;

  // Blocks for rows * threads_per_row threads, at most one full wave of resident blocks on
  // `device` (the rest is covered by the kernel's grid-stride loop), at least 1.
  static std::uint32_t grid_size(std::int64_t rows, std::uint32_t threads_per_row,
                                 std::uint32_t block_size, const DeviceInfo& device);

  // Builds cuda_csr_vector (cuda_csr_vector_rules.hpp) on source.device(), a CUDA device: its
  // arrays are the source's device CSR in `precision` (source.device_csr, int64 row offsets,
  // int32 column indices, values), shared, not copied: the build uploads only what the source
  // has not uploaded yet. apply() launches the kernel variant for the candidate's
  // threads_per_row on the device stream.
  // Throws Error(invalid_argument) when the candidate is not a compiled variant of this format
  // (threads_per_row, block_size) or has grid_size 0, Error(failed_precondition) on a CPU device,
  // Error(resource_exhausted) when device memory runs out.
  static std::unique_ptr<SpmvOperator> build(const BuildSource& source, Precision precision,
                                             const Candidate& candidate);
};

}  // namespace spmvd
