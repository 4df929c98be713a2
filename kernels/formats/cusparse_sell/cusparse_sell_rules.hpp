#pragma once
// cuSPARSE generic SpMV on a sliced ELL descriptor (cusparseCreateSlicedEll,
// CUSPARSE_SPMV_SELL_ALG1): the arrays of common/sell_layout.hpp without sorting (cuSPARSE's
// SELL has no permutation), 32-bit slice offsets and column indices. FormatParams.slice_height
// is the slice size; cuSPARSE picks its own launch configuration, so launch is {}.

#include <array>
#include <cstdint>

#include "kernels/format_rules.hpp"

namespace spmvd {

inline constexpr FormatId kCusparseSellFormatId{10};

// cusparseSpMVAlg_t value (cusparse.h; checked by static_assert in the operator).
inline constexpr std::uint32_t kCusparseSpmvSellAlg1 = 5;
inline constexpr std::array<std::uint32_t, 2> kCusparseSellSliceHeights{32, 64};

class CusparseSellRules final : public FormatRules {
 public:
  FormatId id() const noexcept override { return kCusparseSellFormatId; }
  std::string_view name() const noexcept override { return "cusparse_sell"; }
  bool needs_gpu() const noexcept override { return true; }

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
};

}  // namespace spmvd
