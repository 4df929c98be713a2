#include "kernels/formats/cusparse_bsr/cusparse_bsr_features.hpp"

#include <algorithm>
#include <utility>

#include "kernels/formats/cusparse_bsr/cusparse_bsr_rules.hpp"

namespace spmvd {

CusparseBsrFeatures compute_cusparse_bsr_features(const CsrMatrix<double>& m) {
  CusparseBsrFeatures out;
  std::vector<ColIndex> merged, scratch;
  for (const std::uint32_t dim : kBsrBlockDims) {
    const std::int64_t b = dim;
    std::int64_t blocks = 0;
    for (std::int64_t first = 0; first < m.rows; first += b) {
      const std::int64_t last = std::min(first + b, m.rows);
      // The block row's columns in one sorted run (its rows are sorted), then its distinct
      // column / b.
      const auto row = [&](std::int64_t r) {
        return std::pair{m.col_indices.begin() + m.row_offsets[static_cast<std::size_t>(r)],
                         m.col_indices.begin() + m.row_offsets[static_cast<std::size_t>(r + 1)]};
      };
      merged.assign(row(first).first, row(first).second);
      for (std::int64_t r = first + 1; r < last; ++r) {
        scratch.resize(merged.size() + static_cast<std::size_t>(m.row_length(r)));
        std::merge(merged.begin(), merged.end(), row(r).first, row(r).second, scratch.begin());
        merged.swap(scratch);
      }
      std::int64_t previous = -1;
      for (const ColIndex c : merged) {
        const std::int64_t block_col = c / b;
        blocks += block_col != previous;
        previous = block_col;
      }
    }
    out.block_dims.push_back(b);
    out.blocks.push_back(blocks);
  }
  return out;
}

std::optional<std::int64_t> bsr_block_count(const MatrixFeatures& features,
                                            std::int64_t block_dim) {
  const auto it = features.format_features.find("cusparse_bsr");
  if (it == features.format_features.end()) return std::nullopt;
  const auto own = it->second.as<CusparseBsrFeatures>("features of cusparse_bsr");
  if (own.block_dims.size() != own.blocks.size())
    throw_invalid("features of cusparse_bsr: block_dims and blocks of different lengths");
  for (std::size_t i = 0; i < own.block_dims.size(); ++i)
    if (own.block_dims[i] == block_dim) return own.blocks[i];
  return std::nullopt;
}

}  // namespace spmvd
