#include "kernels/formats/cuda_csr_vector/cuda_csr_vector_rules.hpp"

#include <algorithm>
#include <limits>

#include "core/csr_matrix.hpp"

namespace spmvd {

bool CudaCsrVectorRules::admissible(const MatrixFeatures& features, const DeviceInfo& device,
                                    Precision precision, std::uint64_t memory_budget_bytes) const {
  if (!device.is_gpu) return false;
  return device_bytes(features, precision, Candidate{.format = id(), .params = {}, .launch = {}}) <=
         memory_budget_bytes;
}

std::vector<Candidate> CudaCsrVectorRules::candidates(const MatrixFeatures& features,
                                                      const DeviceInfo& device) const {
  // Lanes beyond twice the mean row length mostly idle; with fewer than mean/32 lanes each lane
  // walks more than 32 entries of a typical row serially, work a wider group of the same warp
  // would share. Both bounds only prune obvious losers; the measured sweep decides.
  const double mean = features.row_length_mean;
  std::vector<std::uint32_t> lanes;
  for (const std::uint32_t tpr : kCsrVectorThreadsPerRow)
    if (tpr <= std::max(2.0, 2.0 * mean) && tpr >= mean / 32.0) lanes.push_back(tpr);
  // Every pruned-out width is on one side: keep the widest for very long rows, else the narrowest.
  if (lanes.empty())
    lanes.push_back(mean > 2.0 ? kCsrVectorThreadsPerRow.back() : kCsrVectorThreadsPerRow.front());

  std::vector<Candidate> out;
  for (const std::uint32_t tpr : lanes)
    for (const std::uint32_t block : kCsrVectorBlockSizes)
      out.push_back(
          Candidate{.format = id(),
                    .params = {},
                    .launch = {.block_size = block,
                               .threads_per_row = tpr,
                               .grid_size = grid_size(features.rows, tpr, block, device)}});
  return out;
}

std::uint64_t CudaCsrVectorRules::device_bytes(const MatrixFeatures& features, Precision precision,
                                               const Candidate&) const {
  const auto rows = static_cast<std::uint64_t>(features.rows);
  const auto nnz = static_cast<std::uint64_t>(features.nnz);
  return (rows + 1) * sizeof(RowOffset) + nnz * (sizeof(ColIndex) + value_bytes(precision));
}

std::uint32_t CudaCsrVectorRules::grid_size(std::int64_t rows, std::uint32_t threads_per_row,
                                            std::uint32_t block_size, const DeviceInfo& device) {
  const std::uint64_t rows_per_block = std::max<std::uint32_t>(1, block_size / threads_per_row);
  std::uint64_t blocks =
      (static_cast<std::uint64_t>(std::max<std::int64_t>(rows, 0)) + rows_per_block - 1) /
      rows_per_block;
  // One full wave of resident blocks: more blocks than fit at once would only queue behind
  // them, while the grid-stride loop already hands every thread its next row.
  std::uint64_t blocks_per_sm =
      device.max_threads_per_sm > 0
          ? static_cast<std::uint64_t>(device.max_threads_per_sm) / block_size
          : 0;
  if (device.max_blocks_per_sm > 0)
    blocks_per_sm = std::min<std::uint64_t>(blocks_per_sm, device.max_blocks_per_sm);
  const std::uint64_t resident =
      blocks_per_sm * static_cast<std::uint64_t>(std::max(device.sm_count, 0));
  if (resident > 0) blocks = std::min(blocks, resident);
  // CUDA's grid x-dimension limit is 2^31 - 1.
  blocks = std::min<std::uint64_t>(blocks, std::numeric_limits<std::int32_t>::max());
  return static_cast<std::uint32_t>(std::max<std::uint64_t>(blocks, 1));
}

}  // namespace spmvd
