#include "kernels/formats/cuda_csr_scalar/cuda_csr_scalar_rules.hpp"

#include "core/csr_matrix.hpp"
#include "kernels/formats/common/rules_support.hpp"

namespace spmvd {

bool CudaCsrScalarRules::admissible(const MatrixFeatures& features, const DeviceInfo& device,
                                    Precision precision, std::uint64_t memory_budget_bytes) const {
  if (!device.is_gpu) return false;
  return smallest_candidate_bytes(*this, features, device, precision) <= memory_budget_bytes;
}

std::vector<Candidate> CudaCsrScalarRules::candidates(const MatrixFeatures& features,
                                                      const DeviceInfo& device) const {
  // The scalar kernel is the vector kernel's grid rule with one lane per row.
  return one_thread_per_row_candidates(id(), {}, kCsrScalarBlockSizes, features.rows, device);
}

std::uint64_t CudaCsrScalarRules::device_bytes(const MatrixFeatures& features, Precision precision,
                                               const Candidate&) const {
  const auto rows = static_cast<std::uint64_t>(features.rows);
  const auto nnz = static_cast<std::uint64_t>(features.nnz);
  return (rows + 1) * sizeof(RowOffset) + nnz * (sizeof(ColIndex) + value_bytes(precision));
}

}  // namespace spmvd
