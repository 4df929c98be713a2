#pragma once
// Host-side EHYB layout (paper 002, Sec. 3.2 and 3.4, Alg. 1-2), built from a partition of the
// rows (ehyb_partition.hpp):
//  - Post-partitioning reordering: rows grouped by part (part 0 first), and inside a part sorted
//    by the length of their cached part, descending (Alg. 1 lines 16-22), so the 32 rows of a
//    slice run nearly equal loop counts. Rows and columns get the same new order (the matrix is
//    square), so part p owns the new indices [partition_row_begin[p], partition_row_begin[p+1])
//    both as rows and as the x slice its block caches.
//  - Cached sliced ELL part: the entries whose column lies in the row's own part, slices of 32
//    rows (a warp), column-major, column indices stored as 16-bit offsets into the part's x
//    slice (Sec. 3.4: the slice is at most 2^16 values, so the index fits a short).
//  - Extra rows (ER): the entries whose column lies in another part, rows sorted by their ER
//    length, descending, in slices of 32, with the row map er_row_map (the paper's yIdxER).
// One deliberate difference from the paper, to avoid a permuted copy of x: ER columns and
// er_row_map hold the caller's indices (the ER kernel reads x in the caller's order; the
// operator maps er_row_map through new_index, as it computes y in the new order).

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/csr_matrix.hpp"
#include "core/plan_partition.hpp"
#include "kernels/build_source.hpp"

namespace spmvd {

inline constexpr std::int64_t kEhybSliceRows = 32;  // the paper's slice stride: a warp
// Padding marker of the cached part; padding follows a row's entries, so a kernel stops at the
// first one. Local indices are therefore < kEhybMaxCacheEntries.
inline constexpr std::uint16_t kEhybPaddingLocalColumn = 0xFFFF;
inline constexpr std::int64_t kEhybMaxCacheEntries = 0xFFFF;

template <typename Value>
struct EhybLayout {
  std::int64_t rows = 0;
  std::int32_t partitions = 0;
  std::int64_t cache_entries = 0;  // the largest part: x values one block caches
  // New row/column i is the caller's row/column permutation[i], and the caller's row r is new
  // row new_index[r] (the paper's ReorderTable: the map y is gathered back through).
  std::vector<std::int32_t> permutation;
  std::vector<std::int32_t> new_index;
  std::vector<std::int32_t> partition_row_begin;    // partitions + 1, in new indices
  std::vector<std::int32_t> partition_slice_begin;  // partitions + 1, cached-part slices
  // Cached part: slice s holds new rows partition_row_begin[p] + 32 * (s -
  // partition_slice_begin[p]) + lane for its part p; entry j of lane l at
  // ell_slice_offsets[s] + 32 * j + l.
  std::vector<std::int64_t> ell_slice_offsets;   // slices + 1
  std::vector<std::uint16_t> ell_local_columns;  // new column - partition_row_begin[p]
  std::vector<Value> ell_values;
  // ER part: ER row i (ER slice i / 32, lane i % 32) adds to the caller's row er_row_map[i].
  std::int64_t er_rows = 0;
  std::vector<std::int32_t> er_row_map;        // er_rows
  std::vector<std::int64_t> er_slice_offsets;  // ceil(er_rows / 32) + 1
  std::vector<ColIndex> er_columns;            // caller's columns, kPaddingColumn padding
  std::vector<Value> er_values;

  std::int64_t ell_slots() const noexcept { return ell_slice_offsets.back(); }
  std::int64_t er_slots() const noexcept { return er_slice_offsets.back(); }
};

// Alg. 1 lines 3-27 and Alg. 2 for the given part of every row (part_of_row[i] in
// [0, partitions)). O(nnz + rows log rows). Throws Error(invalid_argument) for a non-square
// matrix, rows >= 2^31, a part index out of range, or a part of more than kEhybMaxCacheEntries
// rows (its local indices would not fit 16 bits).
template <typename Value>
EhybLayout<Value> make_ehyb_layout(const CsrMatrix<double>& matrix,
                                   std::span<const std::int32_t> part_of_row,
                                   std::int32_t partitions);

// The kind of cuda_ehyb's partition into `partitions` parts (core/plan_partition.hpp): METIS's
// part of every row, "metis_kway/<partitions>".
std::string ehyb_partition_kind(std::int32_t partitions);

// The part of every row of source.host() for `partitions` parts: the one the source holds (a
// stored plan's, offered on a cache hit, or an earlier candidate's at the same part count)
// where it is of this kind, a label in [0, partitions) for every row and no part above
// max_part_rows rows (the x cache the build has: a partition beyond it would be refused); else
// partition_matrix_graph's (METIS, timed and logged), which the source then holds.
std::shared_ptr<const PlanPartition> ehyb_partition(const BuildSource& source,
                                                    std::int32_t partitions,
                                                    std::int64_t max_part_rows);

// make_ehyb_layout, timed; logs the layout time, the parts, the cache size and the share of
// entries in ER.
template <typename Value>
EhybLayout<Value> build_ehyb_layout(const CsrMatrix<double>& matrix,
                                    std::span<const std::int32_t> part_of_row,
                                    std::int32_t partitions);
// The whole preprocessing without a source: partition_matrix_graph then the above.
template <typename Value>
EhybLayout<Value> build_ehyb_layout(const CsrMatrix<double>& matrix, std::int32_t partitions);

}  // namespace spmvd
