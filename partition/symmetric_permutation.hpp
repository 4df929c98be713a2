#pragma once
// Symmetric permutations of a square matrix, P A P^T (rows and columns renumbered alike), and
// the bandwidth they are judged by. An order is the new-to-old map every reordering in spmvd
// uses (bar_order, length_sorted_row_order): entry i is the original index placed at position
// i, so row i of P A P^T is row order[i] of A and its column j is column order[j] of A.

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "core/csr_matrix.hpp"

namespace spmvd {

// P A P^T: row i is row order[i] of m, every column c renumbered to inverse(order)[c], the
// columns of each row ascending again (CsrMatrix's normal form). O(nnz log row length),
// parallel over rows (oneTBB); thread-safe (reads m only). Throws Error(invalid_argument) for a
// matrix that is not square or an order that is not a permutation of its rows.
CsrMatrix<double> permute_symmetric(const CsrMatrix<double>& m,
                                    std::span<const std::int32_t> order);

// inverse[order[i]] = i. Throws Error(invalid_argument) unless `order` is a permutation of
// 0 .. order.size()-1 ("<owner>: order entry 7 is 12, outside 0..9" or "... repeats row 3").
std::vector<std::int32_t> inverse_permutation(std::string_view owner,
                                              std::span<const std::int32_t> order);

// The bandwidth max |r - c| over the entries (r, c) of m; 0 without entries. O(nnz), parallel.
std::int64_t matrix_bandwidth(const CsrMatrix<double>& m);
// The bandwidth of P A P^T for `order`, without building it: max |inv[r] - inv[c]|. Throws as
// permute_symmetric does.
std::int64_t matrix_bandwidth(const CsrMatrix<double>& m, std::span<const std::int32_t> order);

}  // namespace spmvd
