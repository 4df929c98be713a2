#include "kernels/formats/cpu_coo/cpu_coo_rules.hpp"

#include "core/csr_matrix.hpp"

namespace spmvd {

bool CpuCooRules::admissible(const MatrixFeatures& features, const DeviceInfo& device,
                             Precision precision, std::uint64_t memory_budget_bytes) const {
  if (device.is_gpu) return false;
  return device_bytes(features, precision, Candidate{.format = id(), .params = {}, .launch = {}}) <=
         memory_budget_bytes;
}

std::vector<Candidate> CpuCooRules::candidates(const MatrixFeatures&, const DeviceInfo&) const {
  return {Candidate{.format = id(), .params = {}, .launch = {}}};
}

std::uint64_t CpuCooRules::device_bytes(const MatrixFeatures& features, Precision precision,
                                        const Candidate&) const {
  return static_cast<std::uint64_t>(features.nnz) *
         (sizeof(std::int32_t) + sizeof(ColIndex) + value_bytes(precision));
}

}  // namespace spmvd
