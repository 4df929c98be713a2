#include "kernels/formats/cuda_ell/cuda_ell_rules.hpp"

#include "core/csr_matrix.hpp"
#include "kernels/formats/common/padding_stop_walk.hpp"
#include "kernels/formats/common/rules_support.hpp"

namespace spmvd {

bool CudaEllRules::admissible(const MatrixFeatures& features, const DeviceInfo& device,
                              Precision precision, std::uint64_t memory_budget_bytes) const {
  if (!device.is_gpu) return false;
  if (features.rows * features.row_length_max > kEllMaxPaddingRatio * features.nnz) return false;
  return smallest_candidate_bytes(*this, features, device, precision) <= memory_budget_bytes;
}

std::vector<Candidate> CudaEllRules::candidates(const MatrixFeatures& features,
                                                const DeviceInfo& device) const {
  return one_thread_per_row_candidates(
      id(),
      FieldSet::of(CudaEllParams{.ell_width = static_cast<std::uint32_t>(features.row_length_max)}),
      kEllBlockSizes, features.rows, device);
}

std::uint64_t CudaEllRules::device_bytes(const MatrixFeatures& features, Precision precision,
                                         const Candidate& candidate) const {
  const auto slots =
      static_cast<std::uint64_t>(features.rows) * std::uint64_t{params_of(candidate).ell_width};
  return slots * (sizeof(ColIndex) + value_bytes(precision));
}

std::uint64_t CudaEllRules::streamed_bytes(const MatrixFeatures& features, Precision precision,
                                           const Candidate& candidate) const {
  const std::int64_t walked =
      ell_walked_width(features, static_cast<std::int64_t>(params_of(candidate).ell_width));
  const auto slots = static_cast<std::uint64_t>(features.rows) * static_cast<std::uint64_t>(walked);
  return slots * (sizeof(ColIndex) + value_bytes(precision));
}

}  // namespace spmvd
