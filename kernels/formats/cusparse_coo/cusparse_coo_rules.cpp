#include "kernels/formats/cusparse_coo/cusparse_coo_rules.hpp"

#include "core/csr_matrix.hpp"
#include "kernels/formats/common/rules_support.hpp"
#include "kernels/formats/cusparse_csr/cusparse_csr_rules.hpp"

namespace spmvd {

bool CusparseCooRules::admissible(const MatrixFeatures& features, const DeviceInfo& device,
                                  Precision precision, std::uint64_t memory_budget_bytes) const {
  if (!device.is_gpu || features.nnz > kMaxDimension) return false;
  return smallest_candidate_bytes(*this, features, device, precision) <= memory_budget_bytes;
}

std::vector<Candidate> CusparseCooRules::candidates(const MatrixFeatures&,
                                                    const DeviceInfo&) const {
  return {Candidate{
              .format = id(),
              .params = FieldSet::of(CusparseCooParams{.library_algorithm = kCusparseSpmvCooAlg1}),
              .launch = {}},
          Candidate{
              .format = id(),
              .params = FieldSet::of(CusparseCooParams{.library_algorithm = kCusparseSpmvCooAlg2}),
              .launch = {}}};
}

std::uint64_t CusparseCooRules::device_bytes(const MatrixFeatures& features, Precision precision,
                                             const Candidate&) const {
  return static_cast<std::uint64_t>(features.nnz) *
             (sizeof(std::int32_t) + sizeof(ColIndex) + value_bytes(precision)) +
         CusparseCsrRules::workspace_bound_bytes(features.rows);
}

std::uint64_t CusparseCooRules::dram_streamed_bytes(const MatrixFeatures& features,
                                                    Precision precision,
                                                    const Candidate& candidate) const {
  return device_bytes(features, precision, candidate) -
         CusparseCsrRules::workspace_bound_bytes(features.rows);
}

}  // namespace spmvd
