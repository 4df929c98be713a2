#pragma once
// The reordering of paper 000 (Sec. 5.6, Algorithm 3): every row goes to the block C_j whose
// length interval (M_{j-1}, M_j] holds its length, found by binary search among the boundaries,
// and the rows are permuted block by block. Gives BCE's rowNo, Ap and Aw (Sec. 6.2).
//
// Stable: the rows of one block keep their original order (the paper's example: C_1 = {r1, r3,
// r4, r6, r10}). Empty rows, which the paper removes from A (Sec. 4.1), follow the last block.
// Work: Algorithm 3's binary search, O(log k), for rows of 4096 non-zeros or more; shorter rows
// find their block in a table built once from the boundaries (O(k + 4096)), the same answer
// without a mispredicted branch per search step. So O(N log k) at worst, O(N) where rows are
// short. A counting sort parallel with oneTBB over fixed chunks of rows (count per chunk and
// block, scan, scatter): one pass over the row offsets and one over a 16-bit bucket per row
// (a second pass over the offsets where k >= 65535), and the result does not depend on the
// thread count. Thread safety: pure function.

#include <cstdint>
#include <span>
#include <vector>

namespace spmvd {

struct BlockedRowOrder {
  // rowNo: position -> original row (0-based). The rows of block j at [Ap[j], Ap[j+1]), each
  // block in original order, then the empty rows at [Ap[k], N), in original order. A
  // permutation of 0..N-1.
  std::vector<std::int32_t> row_order;
  // Ap: k + 1 entries, Ap[0] = 0, Ap[j+1] - Ap[j] = N(C_j). Ap[k] = the non-empty rows.
  std::vector<std::int64_t> block_row_offsets;
  // Aw: W(C_j), the longest row in block j (0 where the block has no rows).
  std::vector<std::int64_t> block_widths;
  friend bool operator==(const BlockedRowOrder&, const BlockedRowOrder&) = default;
};

// Algorithm 3's binary search: the 0-based j with M_{j-1} < length <= M_j (M_{-1} = 0), or
// upper_lengths.size() when length > M_k. O(log k). `length` must be > 0.
std::int64_t block_of_row_length(std::span<const std::int64_t> upper_lengths,
                                 std::int64_t length) noexcept;

// Algorithm 3 and the permutation for the blocks with upper lengths M_1 < ... < M_k (e.g.
// OptimalPartition::upper_lengths). Throws Error(invalid_argument) when row_offsets is empty or
// decreases at a row, when the matrix has 2^31 rows or more (rowNo is 32-bit, as column indices
// are), when upper_lengths is not strictly ascending or not positive, or when a row is longer
// than M_k (naming the first such row; with no boundaries, k = 0, every row must be empty).
BlockedRowOrder reorder_rows(std::span<const std::int64_t> row_offsets,
                             std::span<const std::int64_t> upper_lengths);

}  // namespace spmvd
