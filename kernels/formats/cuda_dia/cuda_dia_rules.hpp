#pragma once
// DIA (Bell & Garland, SC'09, Sec. 3.1; the GPU part paper 003 uses for quasi-diagonal
// matrices): the matrix's occupied diagonals (offset = column - row), each stored as a full
// column of `rows` values (zero where the diagonal has no entry), diagonal-major, so one thread
// per row reads its values coalesced and x contiguously. No column indices: on a stencil or a
// band it moves value bytes per non-zero where CSR moves value + 4 (+ row offsets).
// One thread per row, grid-stride; block_size is swept, the grid is one wave of resident
// blocks. DIA has no parameters of its own: the diagonals follow from the matrix.

#include <array>
#include <cstdint>
#include <optional>
#include <tuple>
#include <vector>

#include "kernels/build_source.hpp"
#include "kernels/format_rules.hpp"

namespace spmvd {

inline constexpr FormatId kCudaDiaFormatId{13};

inline constexpr std::array<std::uint32_t, 3> kDiaBlockSizes{128, 256, 512};

// DIA is admissible only while diagonals * rows <= kDiaMaxSlotsPerNonzero * nnz. Why: a slot
// costs a value read whether it holds an entry or padding; at S slots per non-zero DIA reads
// S * value bytes where CSR reads value + 4 bytes (+ 8 per row), so beyond S = 2 it moves
// more bytes than CSR in either precision (fp32: 2 * 4 = 8 = 4 + 4) and cannot win.
inline constexpr std::int64_t kDiaMaxSlotsPerNonzero = 2;
// Diagonals counted at most: beyond this many DIA is no candidate on any matrix with fewer
// than kDiaMaxDiagonals / kDiaMaxSlotsPerNonzero non-zeros a row, and counting stops.
inline constexpr std::int64_t kDiaMaxDiagonals = 1024;

// cuda_dia's own features (FormatRules::own_features).
struct CudaDiaFeatures {
  // Distinct offsets (column - row) of the non-zeros, counted up to kDiaMaxDiagonals + 1:
  // min(distinct, kDiaMaxDiagonals + 1).
  std::int64_t diagonals = 0;
  static constexpr auto kFields =
      std::tuple{declare_field("diagonals", &CudaDiaFeatures::diagonals)};
  friend bool operator==(const CudaDiaFeatures&, const CudaDiaFeatures&) = default;
};

// O(nnz) with a bitmap of rows + cols bits per thread, ranges of rows side by side (oneTBB);
// each range stops past kDiaMaxDiagonals + 1.
CudaDiaFeatures compute_cuda_dia_features(const CsrMatrix<double>& m);
// nullopt where the hook did not run (calibration samples); throws Error(invalid_argument)
// when the entry does not decode.
std::optional<CudaDiaFeatures> cuda_dia_features(const MatrixFeatures& features);

class CudaDiaRules final : public FormatRules {
 public:
  FormatId id() const noexcept override { return kCudaDiaFormatId; }
  std::string_view name() const noexcept override { return "cuda_dia"; }
  bool needs_gpu() const noexcept override { return true; }
  // No dedicated model: the bytes model at DIA's own bytes (device_bytes).
  std::string_view model_family() const noexcept override { return "bytes"; }

  // On a GPU, with its features counted, diagonals <= kDiaMaxDiagonals, slots within
  // kDiaMaxSlotsPerNonzero * nnz, and the arrays within the budget.
  bool admissible(const MatrixFeatures& features, const DeviceInfo& device, Precision precision,
                  std::uint64_t memory_budget_bytes) const override;
  // One candidate per block size; none without its features or beyond kDiaMaxDiagonals (the
  // diagonals size it), so the calibration's random samples never build it.
  std::vector<Candidate> candidates(const MatrixFeatures& features,
                                    const DeviceInfo& device) const override;
  // diagonals * rows values + diagonals 32-bit offsets.
  std::uint64_t device_bytes(const MatrixFeatures& features, Precision precision,
                             const Candidate& candidate) const override;
  // CudaDiaFeatures.
  std::optional<FieldSet> own_features(const CsrMatrix<double>& matrix,
                                       const MatrixFeatures& common) const override;

  // Builds cuda_dia on source.device(), a CUDA device: the offsets and the diagonal-major
  // values built there from the source's device CSR (dia_device_layout.hpp), one layout per
  // precision shared by every candidate of the source (source.shared_layout, key "dia/fp64" or
  // "dia/fp32"); apply() launches one thread per row on the device stream.
  // Throws Error(invalid_argument) for a candidate of another format, a block size not in
  // kDiaBlockSizes or grid_size 0; Error(failed_precondition) on a CPU device;
  // Error(resource_exhausted) when memory runs out.
  static std::unique_ptr<SpmvOperator> build(const BuildSource& source, Precision precision,
                                             const Candidate& candidate);
};

}  // namespace spmvd
