#include "kernels/formats/cpu_csr/cpu_csr_rules.hpp"

#include "core/csr_matrix.hpp"

namespace spmvd {

bool CpuCsrRules::admissible(const MatrixFeatures& features, const DeviceInfo& device,
                             Precision precision, std::uint64_t memory_budget_bytes) const {
  if (device.is_gpu) return false;
  return device_bytes(features, precision, Candidate{.format = id(), .params = {}, .launch = {}}) <=
         memory_budget_bytes;
}

std::vector<Candidate> CpuCsrRules::candidates(const MatrixFeatures&, const DeviceInfo&) const {
  return {Candidate{.format = id(), .params = {}, .launch = {}}};
}

std::uint64_t CpuCsrRules::device_bytes(const MatrixFeatures& features, Precision precision,
                                        const Candidate&) const {
  const auto rows = static_cast<std::uint64_t>(features.rows);
  const auto nnz = static_cast<std::uint64_t>(features.nnz);
  return (rows + 1) * sizeof(RowOffset) + nnz * (sizeof(ColIndex) + value_bytes(precision));
}

}  // namespace spmvd
