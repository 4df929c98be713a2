#include "kernels/formats/cuda_dia/cuda_dia_rules.hpp"

#include "core/csr_matrix.hpp"
#include "kernels/formats/common/rules_support.hpp"

namespace spmvd {

CudaDiaFeatures compute_cuda_dia_features(const CsrMatrix<double>& m) {
  // Offset (column - row) + rows - 1 lies in [0, rows + cols - 1).
  std::vector<bool> seen(static_cast<std::size_t>(m.rows + m.cols), false);
  CudaDiaFeatures f;
  for (std::int64_t r = 0; r < m.rows && f.diagonals <= kDiaMaxDiagonals; ++r) {
    for (RowOffset k = m.row_offsets[static_cast<std::size_t>(r)];
         k < m.row_offsets[static_cast<std::size_t>(r + 1)]; ++k) {
      const auto slot =
          static_cast<std::size_t>(m.col_indices[static_cast<std::size_t>(k)] - r + m.rows - 1);
      if (!seen[slot]) {
        seen[slot] = true;
        ++f.diagonals;
      }
    }
  }
  return f;
}

std::optional<CudaDiaFeatures> cuda_dia_features(const MatrixFeatures& features) {
  const auto it = features.format_features.find("cuda_dia");
  if (it == features.format_features.end()) return std::nullopt;
  return it->second.as<CudaDiaFeatures>("features of cuda_dia");
}

bool CudaDiaRules::admissible(const MatrixFeatures& features, const DeviceInfo& device,
                              Precision precision, std::uint64_t memory_budget_bytes) const {
  if (!device.is_gpu) return false;
  const std::optional<CudaDiaFeatures> own = cuda_dia_features(features);
  if (!own || own->diagonals > kDiaMaxDiagonals) return false;
  if (own->diagonals * features.rows > kDiaMaxSlotsPerNonzero * features.nnz) return false;
  return smallest_candidate_bytes(*this, features, device, precision) <= memory_budget_bytes;
}

std::vector<Candidate> CudaDiaRules::candidates(const MatrixFeatures& features,
                                                const DeviceInfo& device) const {
  // Without the diagonals counted, or with more than it counts, nothing bounds DIA's arrays.
  const std::optional<CudaDiaFeatures> own = cuda_dia_features(features);
  if (!own || own->diagonals > kDiaMaxDiagonals) return {};
  return one_thread_per_row_candidates(id(), {}, kDiaBlockSizes, features.rows, device);
}

std::uint64_t CudaDiaRules::device_bytes(const MatrixFeatures& features, Precision precision,
                                         const Candidate&) const {
  const std::optional<CudaDiaFeatures> own = cuda_dia_features(features);
  const auto diagonals = static_cast<std::uint64_t>(own ? own->diagonals : 0);
  return diagonals * static_cast<std::uint64_t>(features.rows) * value_bytes(precision) +
         diagonals * sizeof(std::int32_t);
}

std::optional<FieldSet> CudaDiaRules::own_features(const CsrMatrix<double>& matrix,
                                                   const MatrixFeatures&) const {
  return FieldSet::of(compute_cuda_dia_features(matrix));
}

}  // namespace spmvd
