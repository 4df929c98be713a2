#include "kernels/formats/cuda_ehyb/cuda_ehyb_rules.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <string>

#include "core/error.hpp"
#include "kernels/formats/common/row_length_distribution.hpp"
#include "kernels/formats/common/rules_support.hpp"
#include "kernels/formats/cuda_ehyb/ehyb_layout.hpp"

namespace spmvd {

bool CudaEhybRules::offered(const MatrixFeatures& features, const DeviceInfo& device) {
  return device.is_gpu && device.sm_count > 0 && cache_bytes_per_block(device) > 0 &&
         features.rows == features.cols && features.rows >= kEhybMinRowsPerPartition &&
         features.rows < std::numeric_limits<std::int32_t>::max() && features.nnz > 0 &&
         features.nnz <= kEhybMaxNonzeros &&
         [&] {
           const std::optional<CudaEhybFeatures> own = cuda_ehyb_features(features);
           return own && own->neighbourhood_growth <= kEhybMaxNeighbourhoodGrowth;
         }();
}

std::optional<FieldSet> CudaEhybRules::own_features(const CsrMatrix<double>& matrix,
                                                    const MatrixFeatures&) const {
  return FieldSet::of(compute_cuda_ehyb_features(matrix));
}

std::uint64_t CudaEhybRules::cache_bytes_per_block(const DeviceInfo& device) {
  const std::uint64_t reserved = kEhybReservedSharedBytesPerBlock + kEhybStaticSharedBytes;
  return device.shared_memory_per_sm_bytes > reserved ? device.shared_memory_per_sm_bytes - reserved
                                                      : 0;
}

std::int64_t CudaEhybRules::cache_capacity(const DeviceInfo& device, std::uint64_t value_bytes,
                                           std::int64_t buffers) {
  const std::uint64_t per_buffer =
      cache_bytes_per_block(device) / static_cast<std::uint64_t>(std::max<std::int64_t>(buffers, 1));
  return std::min<std::int64_t>(kEhybMaxCacheEntries,
                                static_cast<std::int64_t>(per_buffer / std::max<std::uint64_t>(value_bytes, 1)));
}

std::int64_t CudaEhybRules::planned_cache_entries(std::int64_t rows, std::int64_t partitions) {
  const double mean = static_cast<double>(rows) / static_cast<double>(std::max<std::int64_t>(partitions, 1));
  return std::min<std::int64_t>(rows,
                                static_cast<std::int64_t>(std::ceil(mean * kEhybPlannedImbalance)));
}

std::int32_t CudaEhybRules::eq1_partitions(std::int64_t rows, const DeviceInfo& device,
                                           std::uint64_t value_bytes) {
  const std::int64_t processors = std::max(device.sm_count, 1);
  const std::int64_t capacity = std::max<std::int64_t>(cache_capacity(device, value_bytes, 1), 1);
  // Eq. 1: the least K with dimension x tau / (K x P) within SHM^max (here: the planned part,
  // with METIS's imbalance allowance, within the capacity in values).
  std::int64_t k = 1;
  while (planned_cache_entries(rows, k * processors) > capacity) ++k;
  const std::int64_t most = std::max<std::int64_t>(rows / kEhybMinRowsPerPartition, 1);
  return static_cast<std::int32_t>(std::clamp<std::int64_t>(k * processors, 1, most));
}

std::uint32_t CudaEhybRules::block_size_for(std::int64_t rows, std::int64_t partitions) {
  const auto rows_per_part = static_cast<std::uint64_t>(
      std::max<std::int64_t>((rows + partitions - 1) / std::max<std::int64_t>(partitions, 1), 1));
  return static_cast<std::uint32_t>(std::clamp<std::uint64_t>(std::bit_ceil(rows_per_part), 64, 1024));
}

std::uint32_t CudaEhybRules::grid_size_for(std::int64_t rows, std::int64_t partitions,
                                           EhybVariant variant, std::uint32_t block_size,
                                           const DeviceInfo& device) {
  const auto parts = static_cast<std::uint32_t>(std::max<std::int64_t>(partitions, 1));
  if (variant == EhybVariant::paper) return parts;
  const std::uint64_t block_shared = 2 * kEhybSizingValueBytes *
                                         static_cast<std::uint64_t>(planned_cache_entries(rows, partitions)) +
                                     kEhybStaticSharedBytes + kEhybReservedSharedBytesPerBlock;
  std::uint64_t per_sm = device.shared_memory_per_sm_bytes / block_shared;
  if (device.max_threads_per_sm > 0)
    per_sm = std::min<std::uint64_t>(per_sm, static_cast<std::uint64_t>(device.max_threads_per_sm) / block_size);
  if (device.max_blocks_per_sm > 0)
    per_sm = std::min<std::uint64_t>(per_sm, static_cast<std::uint64_t>(device.max_blocks_per_sm));
  const std::uint64_t wave =
      std::max<std::uint64_t>(per_sm, 1) * static_cast<std::uint64_t>(std::max(device.sm_count, 1));
  return static_cast<std::uint32_t>(std::min<std::uint64_t>(wave, parts));
}

bool CudaEhybRules::admissible(const MatrixFeatures& features, const DeviceInfo& device,
                               Precision precision, std::uint64_t memory_budget_bytes) const {
  if (!offered(features, device)) return false;
  return smallest_candidate_bytes(*this, features, device, precision) <= memory_budget_bytes;
}

std::vector<Candidate> CudaEhybRules::candidates(const MatrixFeatures& features,
                                                 const DeviceInfo& device) const {
  if (!offered(features, device)) return {};
  const std::int64_t rows = features.rows;
  const std::int32_t eq1 = eq1_partitions(rows, device, kEhybSizingValueBytes);
  std::vector<std::int32_t> counts{eq1};
  // Twice Eq. 1: half the cache per block, so two blocks share an SM (more warps in flight on
  // Hopper, where one 227 KB block leaves the SM at one block) and the async_copy variant's two
  // buffers fit. Only while parts keep kEhybMinRowsPerPartition rows.
  if (static_cast<std::int64_t>(eq1) * 2 <= rows / kEhybMinRowsPerPartition) counts.push_back(eq1 * 2);
  std::vector<Candidate> out;
  for (const std::int32_t parts : counts) {
    const std::uint32_t block = block_size_for(rows, parts);
    for (const std::uint32_t variant : kEhybVariants) {
      const auto kind = static_cast<EhybVariant>(variant);
      const std::int64_t buffers = kind == EhybVariant::async_copy ? 2 : 1;
      if (planned_cache_entries(rows, parts) > cache_capacity(device, kEhybSizingValueBytes, buffers))
        continue;
      out.push_back(Candidate{
          .format = id(),
          .params = FieldSet::of(CudaEhybParams{.partitions = static_cast<std::uint32_t>(parts),
                                                .variant = variant}),
          .launch = {.block_size = block,
                     .threads_per_row = 1,
                     .grid_size = grid_size_for(rows, parts, kind, block, device)}});
    }
  }
  return out;
}

std::uint64_t CudaEhybRules::device_bytes(const MatrixFeatures& features, Precision precision,
                                          const Candidate& candidate) const {
  const CudaEhybParams params = params_of(candidate);
  const auto rows = static_cast<std::uint64_t>(std::max<std::int64_t>(features.rows, 0));
  const auto nnz = static_cast<std::uint64_t>(std::max<std::int64_t>(features.nnz, 0));
  const auto parts = static_cast<std::uint64_t>(std::max<std::uint32_t>(params.partitions, 1));
  const auto longest = static_cast<std::uint64_t>(std::max<std::int64_t>(features.row_length_max, 0));
  // Each part's widest slice is as wide as one of its rows (distinct rows): without a
  // distribution (calibration samples) every part's is the longest row.
  const std::uint64_t part_leaders =
      distribution_covers_nnz(features)
          ? static_cast<std::uint64_t>(
                longest_rows_length_sum(features, static_cast<std::int64_t>(parts)))
          : parts * longest;
  const auto slice_rows = static_cast<std::uint64_t>(kEhybSliceRows);
  const std::uint64_t padding = slice_rows * (part_leaders + longest);
  const std::uint64_t slots = nnz + padding;
  const std::uint64_t values = slots * value_bytes(precision);
  const std::uint64_t indices = 4 * nnz + 2 * slice_rows * part_leaders + 4 * slice_rows * longest;
  const std::uint64_t slices = (rows + slice_rows - 1) / slice_rows;
  const std::uint64_t slice_offsets = sizeof(std::int64_t) * ((slices + parts + 1) + (slices + 1));
  const std::uint64_t maps = sizeof(std::int32_t) * (2 * rows + 2 * (parts + 1));
  return values + indices + slice_offsets + maps;
}

void CudaEhybRules::check_params(const CudaEhybParams& params, std::int64_t rows) {
  if (std::find(kEhybVariants.begin(), kEhybVariants.end(), params.variant) == kEhybVariants.end())
    throw_invalid("cuda_ehyb: variant " + std::to_string(params.variant) +
                  " is not one of 0 (paper), 1 (async_copy)");
  const std::int64_t most = std::max<std::int64_t>(rows / kEhybMinRowsPerPartition, 1);
  if (params.partitions < 1 || params.partitions > most)
    throw_invalid("cuda_ehyb: partitions " + std::to_string(params.partitions) + " for " +
                  std::to_string(rows) + " rows is outside [1, " + std::to_string(most) +
                  "] (at least " + std::to_string(kEhybMinRowsPerPartition) + " rows a part)");
}

}  // namespace spmvd
