#include "kernels/formats/cusparse_csr/cusparse_csr_rules.hpp"

#include <algorithm>
#include <limits>

namespace spmvd {

bool CusparseCsrRules::admissible(const MatrixFeatures& features, const DeviceInfo& device,
                                  Precision precision, std::uint64_t memory_budget_bytes) const {
  if (!device.is_gpu) return false;
  std::uint64_t smallest = std::numeric_limits<std::uint64_t>::max();
  for (const Candidate& candidate : candidates(features, device))
    smallest = std::min(smallest, device_bytes(features, precision, candidate));
  return smallest <= memory_budget_bytes;
}

std::vector<Candidate> CusparseCsrRules::candidates(const MatrixFeatures&,
                                                    const DeviceInfo&) const {
  return {Candidate{
              .format = id(),
              .params = FieldSet::of(CusparseCsrParams{.library_algorithm = kCusparseSpmvCsrAlg1}),
              .launch = {}},
          Candidate{
              .format = id(),
              .params = FieldSet::of(CusparseCsrParams{.library_algorithm = kCusparseSpmvCsrAlg2}),
              .launch = {}}};
}

std::uint64_t CusparseCsrRules::device_bytes(const MatrixFeatures& features, Precision precision,
                                             const Candidate&) const {
  const auto rows = static_cast<std::uint64_t>(features.rows);
  const auto nnz = static_cast<std::uint64_t>(features.nnz);
  const std::uint64_t index = index_bytes(features.nnz);
  return (rows + 1) * index + nnz * (index + value_bytes(precision)) +
         workspace_bound_bytes(features.rows);
}

std::uint64_t CusparseCsrRules::index_bytes(std::int64_t nnz) noexcept {
  return nnz < (std::int64_t{1} << 31) ? 4 : 8;
}

std::uint64_t CusparseCsrRules::workspace_bound_bytes(std::int64_t rows) noexcept {
  // Not from a measurement: a guess of one 64-bit word per row plus 1 MiB, kept on the safe
  // side for admissibility. kernels_conformance_gpu asserts that every built operator stays
  // within it and prints the real workspace.
  return 8 * (static_cast<std::uint64_t>(std::max<std::int64_t>(rows, 0)) + 1) + (1U << 20);
}

std::uint64_t CusparseCsrRules::dram_streamed_bytes(const MatrixFeatures& features,
                                                    Precision precision,
                                                    const Candidate& candidate) const {
  return device_bytes(features, precision, candidate) - workspace_bound_bytes(features.rows);
}

}  // namespace spmvd
