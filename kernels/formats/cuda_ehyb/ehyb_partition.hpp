#pragma once
// EHYB's first preprocessing step (paper 002, Sec. 3.1, Alg. 1 lines 1-2): the matrix read as an
// undirected graph (a vertex per row/column, an edge per off-diagonal entry, A + A^T) and cut
// into parts by METIS's multilevel k-way graph partitioner, so that most of a row's columns lie
// in the row's own part. Graph (not hypergraph) partitioning, as the paper argues (Sec. 3.1):
// on a GPU an x value fetched from another part is not kept, so cut edges are what cost.

#include <cstdint>
#include <vector>

#include "core/csr_matrix.hpp"

namespace spmvd {

// The symmetrised pattern in METIS's CSR graph form: the neighbours of vertex v are
// adjacency[offsets[v] .. offsets[v + 1]), ascending, without v itself and without duplicates.
struct SymmetricGraph {
  std::vector<std::int32_t> offsets;    // vertices + 1 entries (METIS's xadj)
  std::vector<std::int32_t> adjacency;  // METIS's adjncy
  friend bool operator==(const SymmetricGraph&, const SymmetricGraph&) = default;
};

// The pattern of A + A^T without the diagonal. O(nnz log(row length)). Throws
// Error(invalid_argument) for a non-square matrix or one whose 2 * nnz edges overflow 32 bits.
SymmetricGraph symmetrised_pattern(const CsrMatrix<double>& matrix);

// METIS seed: the same structure always gives the same partition (plans are recomputed from
// the structure, so a different cut on a cache hit would change the plan's bytes).
inline constexpr int kEhybMetisSeed = 20261123;
// METIS's k-way imbalance tolerance in thousandths (30: the largest part may exceed rows/parts
// by 3 %, METIS's own default for k-way). The cache is sized for kEhybPlannedImbalance.
inline constexpr int kEhybMetisUfactor = 30;

// The part of every vertex (row i's part at [i]), in [0, parts). parts == 1, or a graph without
// edges, is cut into contiguous blocks without METIS (METIS has nothing to minimise there).
// Deterministic: single-threaded METIS with kEhybMetisSeed. Throws Error(invalid_argument) for
// parts < 1 or parts > rows, Error(internal) when METIS reports an error.
std::vector<std::int32_t> partition_matrix_graph(const CsrMatrix<double>& matrix,
                                                 std::int32_t parts);

}  // namespace spmvd
