#include "kernels/formats/common/rules_support.hpp"

#include <algorithm>
#include <limits>

#include "kernels/formats/cuda_csr_vector/cuda_csr_vector_rules.hpp"

namespace spmvd {

std::uint64_t smallest_candidate_bytes(const FormatRules& rules, const MatrixFeatures& features,
                                       const DeviceInfo& device, Precision precision) {
  std::uint64_t smallest = std::numeric_limits<std::uint64_t>::max();
  for (const Candidate& candidate : rules.candidates(features, device))
    smallest = std::min(smallest, rules.device_bytes(features, precision, candidate));
  return smallest;
}

bool some_candidate_fits(const FormatRules& rules, const MatrixFeatures& features,
                         const DeviceInfo& device, Precision precision,
                         std::uint64_t memory_budget_bytes) {
  for (const Candidate& candidate : rules.candidates(features, device))
    if (rules.device_bytes(features, precision, candidate) <= memory_budget_bytes) return true;
  return false;
}

std::vector<Candidate> one_thread_per_row_candidates(FormatId format, const FormatParams& params,
                                                     std::span<const std::uint32_t> block_sizes,
                                                     std::int64_t rows, const DeviceInfo& device) {
  std::vector<Candidate> out;
  for (const std::uint32_t block : block_sizes)
    out.push_back(Candidate{
        .format = format,
        .params = params,
        .launch = {.block_size = block,
                   .threads_per_row = 1,
                   .grid_size = CudaCsrVectorRules::grid_size(rows, 1, block, device)}});
  return out;
}

std::uint32_t blocks_for(std::uint64_t items, std::uint64_t items_per_block) {
  const std::uint64_t blocks =
      items_per_block ? (items + items_per_block - 1) / items_per_block : 1;
  return static_cast<std::uint32_t>(std::clamp<std::uint64_t>(
      blocks, 1, static_cast<std::uint64_t>(std::numeric_limits<std::int32_t>::max())));
}

}  // namespace spmvd
