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
         features.nnz <= kEhybMaxNonzeros && [&] {
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
  const std::uint64_t per_buffer = cache_bytes_per_block(device) /
                                   static_cast<std::uint64_t>(std::max<std::int64_t>(buffers, 1));
  return std::min<std::int64_t>(
      kEhybMaxCacheEntries,
      static_cast<std::int64_t>(per_buffer / std::max<std::uint64_t>(value_bytes, 1)));
}

std::int64_t CudaEhybRules::planned_cache_entries(std::int64_t rows, std::int64_t partitions) {
  const double mean =
      static_cast<double>(rows) / static_cast<double>(std::max<std::int64_t>(partitions, 1));
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
  return static_cast<std::uint32_t>(
      std::clamp<std::uint64_t>(std::bit_ceil(rows_per_part), 64, 1024));
}

std::uint32_t CudaEhybRules::grid_size_for(std::int64_t partitions, EhybVariant variant,
                                           const DeviceInfo& device) {
  const auto parts = static_cast<std::uint32_t>(std::max<std::int64_t>(partitions, 1));
  if (variant == EhybVariant::paper) return parts;
  return std::min(parts, static_cast<std::uint32_t>(std::max(device.sm_count, 1)));
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
  // Twice Eq. 1: half the cache per block, so two blocks share an SM (more warps in flight on
  // Hopper, where one 227 KB block holds the SM alone). Only while parts keep
  // kEhybMinRowsPerPartition rows.
  const bool twice = static_cast<std::int64_t>(eq1) * 2 <= rows / kEhybMinRowsPerPartition;
  std::vector<std::pair<std::int32_t, EhybVariant>> points{{eq1, EhybVariant::paper}};
  if (twice) points.emplace_back(eq1 * 2, EhybVariant::paper);
  // async_copy at twice Eq. 1 (Eq. 1 where the matrix is too small for it): with one persistent
  // block an SM, each block walks two or more parts, and the second part's slice loads while the
  // first computes. Against the paper variant at the same count this isolates the prefetch.
  const std::int32_t async_parts = twice ? eq1 * 2 : eq1;
  if (planned_cache_entries(rows, async_parts) <= cache_capacity(device, kEhybSizingValueBytes, 2))
    points.emplace_back(async_parts, EhybVariant::async_copy);
  std::vector<Candidate> out;
  for (const auto& [parts, variant] : points)
    out.push_back(Candidate{
        .format = id(),
        .params = FieldSet::of(CudaEhybParams{.partitions = static_cast<std::uint32_t>(parts),
                                              .variant = static_cast<std::uint32_t>(variant)}),
        .launch = {.block_size = block_size_for(rows, parts),
                   .threads_per_row = 1,
                   .grid_size = grid_size_for(parts, variant, device)}});
  return out;
}

std::uint64_t CudaEhybRules::device_bytes(const MatrixFeatures& features, Precision precision,
                                          const Candidate& candidate) const {
  const CudaEhybParams params = params_of(candidate);
  const auto rows = static_cast<std::uint64_t>(std::max<std::int64_t>(features.rows, 0));
  const auto nnz = static_cast<std::uint64_t>(std::max<std::int64_t>(features.nnz, 0));
  const auto parts = static_cast<std::uint64_t>(std::max<std::uint32_t>(params.partitions, 1));
  const auto longest =
      static_cast<std::uint64_t>(std::max<std::int64_t>(features.row_length_max, 0));
  // Each part's widest slice is as wide as one of its rows (distinct rows): without a
  // distribution (calibration samples) every part's is the longest row.
  const std::uint64_t part_leaders = distribution_covers_nnz(features)
                                         ? static_cast<std::uint64_t>(longest_rows_length_sum(
                                               features, static_cast<std::int64_t>(parts)))
                                         : parts * longest;
  const auto slice_rows = static_cast<std::uint64_t>(kEhybSliceRows);
  const std::uint64_t padding = slice_rows * (part_leaders + longest);
  const std::uint64_t slots = nnz + padding;
  const std::uint64_t values = slots * value_bytes(precision);
  const std::uint64_t indices = 4 * nnz + 2 * slice_rows * part_leaders + 4 * slice_rows * longest;
  const std::uint64_t slices = (rows + slice_rows - 1) / slice_rows;
  const std::uint64_t slice_offsets = sizeof(std::int64_t) * ((slices + parts + 1) + (slices + 1));
  const std::uint64_t maps = sizeof(std::int32_t) * (2 * rows + 2 * (parts + 1));
  const std::uint64_t gathered_y = rows * (value_bytes(precision) + sizeof(std::int32_t));
  return values + indices + slice_offsets + maps + gathered_y;
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
