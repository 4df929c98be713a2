#pragma once
// CSR scalar kernel (Bell & Garland's "CSR (scalar)"): one thread per row, grid-stride over the
// rows. block_size is the launch parameter swept (paper 004, Sec. 6, Table 5); the grid is one
// full wave of resident blocks for (rows, DeviceInfo), so it is concrete.

#include <array>
#include <cstdint>

#include "kernels/build_source.hpp"
#include "kernels/format_rules.hpp"

namespace spmvd {

inline constexpr FormatId kCudaCsrScalarFormatId{4};

inline constexpr std::array<std::uint32_t, 4> kCsrScalarBlockSizes{64, 128, 256, 512};

class CudaCsrScalarRules final : public FormatRules {
 public:
  FormatId id() const noexcept override { return kCudaCsrScalarFormatId; }
  std::string_view name() const noexcept override { return "cuda_csr_scalar"; }
  bool needs_gpu() const noexcept override { return true; }
  // the CSR-vector model with one lane per row (calibrated as threads_per_row = 1).
  std::string_view model_family() const noexcept override { return "csr_vector"; }

  bool admissible(const MatrixFeatures& features, const DeviceInfo& device, Precision precision,
                  std::uint64_t memory_budget_bytes) const override;
  // One candidate per block size in kCsrScalarBlockSizes.
  std::vector<Candidate> candidates(const MatrixFeatures& features,
                                    const DeviceInfo& device) const override;
  // (rows + 1) 64-bit offsets + nnz 32-bit column indices + nnz values.
  std::uint64_t device_bytes(const MatrixFeatures& features, Precision precision,
                             const Candidate& candidate) const override;

  // Builds cuda_csr_scalar (cuda_csr_scalar_rules.hpp) on source.device(), a CUDA device: its
  // arrays are the source's device CSR in `precision` (source.device_csr, int64 row offsets,
  // int32 column indices, values), shared, not copied: the build uploads only what the source
  // has not uploaded yet. apply() launches one thread per row on the device stream.
  // Throws Error(invalid_argument) for a candidate of another format, a block size not in
  // kCsrScalarBlockSizes or grid_size 0; Error(failed_precondition) on a CPU device;
  // Error(resource_exhausted) when device memory runs out.
  static std::unique_ptr<SpmvOperator> build(const BuildSource& source, Precision precision,
                                             const Candidate& candidate);
};

}  // namespace spmvd
