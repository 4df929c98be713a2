#include "kernels/formats/cusparse_sell/cusparse_sell_rules.hpp"

#include <algorithm>

#include "core/csr_matrix.hpp"
#include "kernels/formats/common/rules_support.hpp"
#include "kernels/formats/cuda_sell/cuda_sell_rules.hpp"
#include "kernels/formats/cusparse_csr/cusparse_csr_rules.hpp"

namespace spmvd {

bool CusparseSellRules::admissible(const MatrixFeatures& features, const DeviceInfo& device,
                                   Precision precision, std::uint64_t memory_budget_bytes) const {
  if (!device.is_gpu) return false;
  std::int64_t fewest_slots = kMaxDimension + std::int64_t{1};
  for (const std::uint32_t height : kCusparseSellSliceHeights)
    fewest_slots = std::min(fewest_slots, CudaSellRules::sell_slot_bound(features, height, 1));
  if (fewest_slots > kMaxDimension) return false;
  return smallest_candidate_bytes(*this, features, device, precision) <= memory_budget_bytes;
}

std::vector<Candidate> CusparseSellRules::candidates(const MatrixFeatures&,
                                                     const DeviceInfo&) const {
  std::vector<Candidate> out;
  for (const std::uint32_t height : kCusparseSellSliceHeights)
    out.push_back(
        Candidate{.format = id(),
                  .params = FieldSet::of(CusparseSellParams{
                      .slice_height = height, .library_algorithm = kCusparseSpmvSellAlg1}),
                  .launch = {}});
  return out;
}

std::uint64_t CusparseSellRules::device_bytes(const MatrixFeatures& features, Precision precision,
                                              const Candidate& candidate) const {
  const std::int64_t height = std::max<std::uint32_t>(params_of(candidate).slice_height, 1);
  const auto slices = static_cast<std::uint64_t>((features.rows + height - 1) / height);
  const auto slots =
      static_cast<std::uint64_t>(CudaSellRules::sell_slot_bound(features, height, 1));
  return (slices + 1) * sizeof(std::int32_t) + slots * (sizeof(ColIndex) + value_bytes(precision)) +
         CusparseCsrRules::workspace_bound_bytes(features.rows);
}

std::uint64_t CusparseSellRules::streamed_bytes(const MatrixFeatures& features,
                                                Precision precision,
                                                const Candidate& candidate) const {
  const std::optional<std::uint64_t> slots =
      CudaSellRules::unsorted_slot_stream_bytes(features, precision);
  if (!slots) return device_bytes(features, precision, candidate);
  const std::int64_t height = std::max<std::uint32_t>(params_of(candidate).slice_height, 1);
  const auto slices = static_cast<std::uint64_t>((features.rows + height - 1) / height);
  return (slices + 1) * sizeof(std::int32_t) + *slots +
         CusparseCsrRules::workspace_bound_bytes(features.rows);
}

std::uint64_t CusparseSellRules::dram_streamed_bytes(const MatrixFeatures& features,
                                                     Precision precision,
                                                     const Candidate& candidate) const {
  return device_bytes(features, precision, candidate) -
         CusparseCsrRules::workspace_bound_bytes(features.rows);
}

}  // namespace spmvd
