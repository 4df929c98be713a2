#include "kernels/formats/cuda_coo/cuda_coo_rules.hpp"

#include <algorithm>

#include "core/csr_matrix.hpp"
#include "kernels/formats/common/rules_support.hpp"

namespace spmvd {

bool CudaCooRules::admissible(const MatrixFeatures& features, const DeviceInfo& device,
                              Precision precision, std::uint64_t memory_budget_bytes) const {
  if (!device.is_gpu) return false;
  return smallest_candidate_bytes(*this, features, device, precision) <= memory_budget_bytes;
}

std::vector<Candidate> CudaCooRules::candidates(const MatrixFeatures& features,
                                                const DeviceInfo&) const {
  std::vector<Candidate> out;
  for (const std::uint32_t block : kCooBlockSizes)
    for (const std::uint32_t per_thread : kCooEntriesPerThread) {
      const Candidate candidate{
          .format = id(),
          .params = {},
          .launch = {.block_size = block,
                     .threads_per_row = 0,
                     .grid_size = grid_size(features.nnz, block, per_thread)}};
      if (std::find(out.begin(), out.end(), candidate) == out.end()) out.push_back(candidate);
    }
  return out;
}

std::uint64_t CudaCooRules::device_bytes(const MatrixFeatures& features, Precision precision,
                                         const Candidate&) const {
  return static_cast<std::uint64_t>(features.nnz) *
         (sizeof(std::int32_t) + sizeof(ColIndex) + value_bytes(precision));
}

std::uint32_t CudaCooRules::grid_size(std::int64_t entries, std::uint32_t block_size,
                                      std::uint32_t entries_per_thread) {
  return blocks_for(static_cast<std::uint64_t>(std::max<std::int64_t>(entries, 0)),
                    std::uint64_t{block_size} * entries_per_thread);
}

}  // namespace spmvd
