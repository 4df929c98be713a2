#pragma once
// What cusparse_bsr needs of a matrix beyond the common features (FormatRules::own_features):
// its non-zero blocks per block size, which set its bytes and its fill. Computed once per
// matrix by feature extraction and stored with the plan under "cusparse_bsr".

#include <cstdint>
#include <optional>
#include <tuple>
#include <vector>

#include "core/csr_matrix.hpp"
#include "core/field_set.hpp"
#include "core/matrix_features.hpp"

namespace spmvd {

// Non-zero b x b blocks of the block grid aligned at (0, 0), for each b of block_dims
// (kBsrBlockDims): what a BSR of block size b stores.
struct CusparseBsrFeatures {
  std::vector<std::int64_t> block_dims;
  std::vector<std::int64_t> blocks;
  static constexpr auto kFields =
      std::tuple{declare_field("block_dims", &CusparseBsrFeatures::block_dims),
                 declare_field("blocks", &CusparseBsrFeatures::blocks)};
  friend bool operator==(const CusparseBsrFeatures&, const CusparseBsrFeatures&) = default;
};

// The b sorted rows of every block row merged into one run, counting distinct column / b.
// O(nnz * b) per block size, a buffer of one block row. Expects columns sorted within rows.
CusparseBsrFeatures compute_cusparse_bsr_features(const CsrMatrix<double>& m);

// The non-zero blocks of block_dim, nullopt where the features do not count them (the hook did
// not run, or another block size). Throws Error(invalid_argument) when the entry does not
// decode.
std::optional<std::int64_t> bsr_block_count(const MatrixFeatures& features, std::int64_t block_dim);

}  // namespace spmvd
