#pragma once
// Host-side BSR layout: the matrix cut into block_dim x block_dim blocks; every block holding at
// least one non-zero is stored whole (row-major inside the block, explicit zeros as fill-in),
// blocks sorted by block column within each block row. Rows and columns past the matrix edge
// (when rows or cols is not a multiple of block_dim) are zero fill-in.

#include <cstdint>
#include <vector>

#include "core/csr_matrix.hpp"

namespace spmvd {

template <typename Value>
struct BsrLayout {
  std::int64_t block_dim = 0;
  std::int64_t block_rows = 0;            // ceil(rows / block_dim)
  std::int64_t block_cols = 0;            // ceil(cols / block_dim)
  std::vector<std::int32_t> row_offsets;  // block_rows + 1, in blocks
  std::vector<std::int32_t> col_indices;  // one block column per stored block
  std::vector<Value> values;              // blocks * block_dim^2, row-major within a block

  std::int64_t blocks() const noexcept { return static_cast<std::int64_t>(col_indices.size()); }
};

// Stored blocks of the BSR form of `matrix`, without building it: O(nnz) time, O(cols / b)
// memory. Throws Error(invalid_argument) for block_dim < 1.
std::int64_t count_bsr_blocks(const CsrMatrix<double>& matrix, std::int64_t block_dim);

// Throws Error(invalid_argument) for block_dim < 1, or when the blocks overflow 32-bit offsets.
template <typename Value>
BsrLayout<Value> make_bsr_layout(const CsrMatrix<double>& matrix, std::int64_t block_dim);

}  // namespace spmvd
