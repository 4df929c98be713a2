#include "kernels/formats/cusparse_bsr/cusparse_bsr_rules.hpp"

#include <algorithm>

#include "core/csr_matrix.hpp"
#include "kernels/formats/common/row_length_distribution.hpp"
#include "kernels/formats/common/rules_support.hpp"
#include "kernels/formats/cusparse_bsr/cusparse_bsr_features.hpp"
#include "kernels/formats/cusparse_csr/cusparse_csr_rules.hpp"

namespace spmvd {

bool CusparseBsrRules::admissible(const MatrixFeatures& features, const DeviceInfo& device,
                                  Precision precision, std::uint64_t memory_budget_bytes) const {
  if (!device.is_gpu) return false;
  for (const Candidate& candidate : candidates(features, device))
    if (may_fill_acceptably(features, params_of(candidate).block_dim) &&
        device_bytes(features, precision, candidate) <= memory_budget_bytes)
      return true;
  return false;
}

std::vector<Candidate> CusparseBsrRules::candidates(const MatrixFeatures& features,
                                                    const DeviceInfo&) const {
  std::vector<Candidate> out;
  for (const std::uint32_t b : kBsrBlockDims)
    if (!bsr_block_count(features, b) || may_fill_acceptably(features, b))
      out.push_back(Candidate{.format = id(),
                              .params = FieldSet::of(CusparseBsrParams{
                                  .library_algorithm = kCusparseSpmvBsrAlg1, .block_dim = b}),
                              .launch = {}});
  return out;
}

std::uint64_t CusparseBsrRules::device_bytes(const MatrixFeatures& features, Precision precision,
                                             const Candidate& candidate) const {
  const std::int64_t b = std::max<std::uint32_t>(params_of(candidate).block_dim, 1);
  const std::int64_t block_rows = (features.rows + b - 1) / b,
                     block_cols = (features.cols + b - 1) / b;
  const std::int64_t max_blocks =
      bsr_block_count(features, b).value_or(bsr_block_upper_bound(features, b));
  const std::uint64_t vb = value_bytes(precision);
  const bool staged = features.rows % b != 0 || features.cols % b != 0;
  const std::uint64_t staging = staged ? static_cast<std::uint64_t>(block_rows + block_cols) *
                                             static_cast<std::uint64_t>(b) * vb
                                       : 0;
  return static_cast<std::uint64_t>(block_rows + 1 + max_blocks) * sizeof(std::int32_t) +
         static_cast<std::uint64_t>(max_blocks * b * b) * vb + staging +
         CusparseCsrRules::workspace_bound_bytes(features.rows);
}

std::int64_t CusparseBsrRules::bsr_slot_lower_bound(const MatrixFeatures& features,
                                                    std::int64_t block_dim) {
  const std::int64_t b = std::max<std::int64_t>(block_dim, 1);
  const std::int64_t blocks =
      std::max(sorted_group_leader_sum(features, b, b), (features.nnz + b * b - 1) / (b * b));
  return blocks * b * b;
}

std::int64_t CusparseBsrRules::bsr_block_upper_bound(const MatrixFeatures& features,
                                                     std::int64_t block_dim) {
  const std::int64_t b = std::max<std::int64_t>(block_dim, 1);
  const std::int64_t block_rows = (features.rows + b - 1) / b,
                     block_cols = (features.cols + b - 1) / b;
  std::int64_t blocks = features.nnz;  // one block per entry at worst
  if (distribution_covers_nnz(features)) {
    blocks = 0;
    for (const RowLengthCount& bucket : features.distribution)
      blocks += std::min(bucket.length, block_cols) * bucket.rows;
  }
  return std::min(blocks, block_rows * block_cols);
}

bool CusparseBsrRules::may_fill_acceptably(const MatrixFeatures& features, std::int64_t block_dim) {
  if (features.nnz == 0) return true;  // nothing to fill: y = beta*y in any format
  if (const std::optional<std::int64_t> blocks = bsr_block_count(features, block_dim))
    return *blocks * block_dim * block_dim <= kBsrMaxFillRatio * features.nnz;
  return bsr_slot_lower_bound(features, block_dim) < kBsrMaxFillRatio * features.nnz;
}

std::optional<FieldSet> CusparseBsrRules::own_features(const CsrMatrix<double>& matrix,
                                                       const MatrixFeatures&) const {
  return FieldSet::of(compute_cusparse_bsr_features(matrix));
}

std::uint64_t CusparseBsrRules::dram_streamed_bytes(const MatrixFeatures& features,
                                                    Precision precision,
                                                    const Candidate& candidate) const {
  return device_bytes(features, precision, candidate) -
         CusparseCsrRules::workspace_bound_bytes(features.rows);
}

}  // namespace spmvd
