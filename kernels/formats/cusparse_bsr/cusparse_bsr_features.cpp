#include "kernels/formats/cusparse_bsr/cusparse_bsr_features.hpp"

#include <algorithm>
#include <functional>
#include <utility>
#include <vector>

#include <tbb/blocked_range.h>
#include <tbb/parallel_reduce.h>

#include "kernels/formats/cusparse_bsr/cusparse_bsr_rules.hpp"

namespace spmvd {

CusparseBsrFeatures compute_cusparse_bsr_features(const CsrMatrix<double>& m) {
  CusparseBsrFeatures out;
  for (const std::uint32_t dim : kBsrBlockDims) {
    const std::int64_t b = dim;
    const std::int64_t block_rows = (m.rows + b - 1) / b;
    // Block rows are independent: counted in parallel (the feature pass runs on the tuning
    // thread while the matrix is served, and its time is the tuning's largest cost).
    const std::int64_t blocks = tbb::parallel_reduce(
        tbb::blocked_range<std::int64_t>(0, block_rows, 512), std::int64_t{0},
        [&](const tbb::blocked_range<std::int64_t>& range, std::int64_t sum) {
          std::vector<ColIndex> merged, scratch;
          for (std::int64_t block_row = range.begin(); block_row < range.end(); ++block_row) {
            const std::int64_t first = block_row * b;
            const std::int64_t last = std::min(first + b, m.rows);
            // The block row's columns in one sorted run (its rows are sorted), then its
            // distinct column / b.
            const auto row = [&](std::int64_t r) {
              return std::pair{
                  m.col_indices.begin() + m.row_offsets[static_cast<std::size_t>(r)],
                  m.col_indices.begin() + m.row_offsets[static_cast<std::size_t>(r + 1)]};
            };
            merged.assign(row(first).first, row(first).second);
            for (std::int64_t r = first + 1; r < last; ++r) {
              scratch.resize(merged.size() + static_cast<std::size_t>(m.row_length(r)));
              std::merge(merged.begin(), merged.end(), row(r).first, row(r).second,
                         scratch.begin());
              merged.swap(scratch);
            }
            std::int64_t previous = -1;
            for (const ColIndex c : merged) {
              const std::int64_t block_col = c / b;
              sum += block_col != previous;
              previous = block_col;
            }
          }
          return sum;
        },
        std::plus<>());
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
