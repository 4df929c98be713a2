#pragma once
// cuSPARSE generic SpMV on a sliced ELL descriptor (cusparseCreateSlicedEll,
// CUSPARSE_SPMV_SELL_ALG1): the arrays of common/sell_layout.hpp without sorting (cuSPARSE's
// SELL has no permutation), 32-bit slice offsets and column indices. params.slice_height
// is the slice size; cuSPARSE picks its own launch configuration, so launch is {}.

#include <array>
#include <cstdint>
#include <tuple>

#include "kernels/build_source.hpp"
#include "kernels/format_rules.hpp"

namespace spmvd {

inline constexpr FormatId kCusparseSellFormatId{10};

// cusparseSpMVAlg_t value (cusparse.h; checked by static_assert in the operator).
inline constexpr std::uint32_t kCusparseSpmvSellAlg1 = 5;
inline constexpr std::array<std::uint32_t, 2> kCusparseSellSliceHeights{32, 64};

// cusparse_sell's parameters (Candidate::params holds FieldSet::of(them)).
struct CusparseSellParams {
  std::uint32_t slice_height = 0;       // rows per slice
  std::uint32_t library_algorithm = 0;  // cusparseSpMVAlg_t value
  static constexpr auto kFields =
      std::tuple{declare_field("slice_height", &CusparseSellParams::slice_height),
                 declare_field("library_algorithm", &CusparseSellParams::library_algorithm)};
  friend bool operator==(const CusparseSellParams&, const CusparseSellParams&) = default;
};

class CusparseSellRules final : public FormatRules {
 public:
  FormatId id() const noexcept override { return kCusparseSellFormatId; }
  std::string_view name() const noexcept override { return "cusparse_sell"; }
  bool needs_gpu() const noexcept override { return true; }
  // no dedicated model: the bytes model, fitted on this format's own samples.
  std::string_view model_family() const noexcept override { return "bytes"; }

  // On a GPU, padded slots (bounded as in CudaSellRules::sell_slot_bound) < 2^31 for the
  // 32-bit slice offsets, within the budget.
  bool admissible(const MatrixFeatures& features, const DeviceInfo& device, Precision precision,
                  std::uint64_t memory_budget_bytes) const override;
  // One candidate per slice height in kCusparseSellSliceHeights.
  std::vector<Candidate> candidates(const MatrixFeatures& features,
                                    const DeviceInfo& device) const override;
  // (slices + 1) 32-bit offsets + the unsorted slot bound of (column index + value) +
  // CusparseCsrRules::workspace_bound_bytes: an upper bound (the row order is not a feature).
  std::uint64_t device_bytes(const MatrixFeatures& features, Precision precision,
                             const Candidate& candidate) const override;
  // device_bytes with the slots read per 32-byte sector (CudaSellRules::
  // unsorted_slot_stream_bytes): cuSPARSE's padding column -1 ends a row, as in cuda_sell.
  // On the 2026-11-24 H100 tuner-live samples (20 unseen matrices, model-accuracy --samples)
  // cusparse_sell's median error is 13.2 % so, 20.9 % at the stored slots (docs/MODELS.md).
  std::uint64_t streamed_bytes(const MatrixFeatures& features, Precision precision,
                               const Candidate& candidate) const override;
  // device_bytes without the workspace bound: every padded slot of every slice. Beyond L2
  // cuSPARSE SELL reads its padding: on an H100 (2026-12-07, version 38's suite run) cage11-x32
  // and bcsstk16-x64 streamed 2.76-2.90 TB/s in both precisions and both slice heights counted
  // so, 2.42-2.65 counted per sector (streamed_bytes), and slice height 64 took 1.03-1.06x the
  // time of 32 where their padded slots differ 1.05x and their sector slots not at all.
  std::uint64_t dram_streamed_bytes(const MatrixFeatures& features, Precision precision,
                                    const Candidate& candidate) const override;

  // Builds cusparse_sell (cusparse_sell_rules.hpp) on the source's CUDA device: the unsorted
  // sliced ELL arrays (cuSPARSE's padding convention) built on the device from the shared CSR
  // (common/device_sell.hpp) and shared with cuda_sell's unsorted candidates of the same slice
  // height, its own 32-bit slice offsets, a cuSPARSE handle on the device stream, the SELL
  // descriptor and the SpMV workspace created once; apply() is one cusparseSpMV.
  // Throws Error(invalid_argument) for a candidate of another format, a slice height not in
  // kCusparseSellSliceHeights, an algorithm other than SELL ALG1, or more than 2^31 - 1 padded
  // slots; Error(failed_precondition) on a CPU device; Error(resource_exhausted) when memory runs
  // out.
  static std::unique_ptr<SpmvOperator> build(const BuildSource& source, Precision precision,
                                             const Candidate& candidate);

  // The candidate's CusparseSellParams; throws Error(invalid_argument) naming the field a stored
  // plan lacks.
  static CusparseSellParams params_of(const Candidate& candidate) {
    return candidate.params.as<CusparseSellParams>("cusparse_sell");
  }
};

}  // namespace spmvd
