#pragma once
// Reverse Cuthill-McKee (RCM), the bandwidth-reducing symmetric order (Cuthill and McKee 1969;
// George 1971 for the reversal), by Boost.Graph's cuthill_mckee_ordering (Debian's
// libboost-graph-dev) over the pattern of A + A^T without its diagonal: per connected component
// (in order of their lowest-numbered vertex) a breadth-first search from a pseudo-peripheral
// vertex found by Boost's find_starting_node (George-Liu), each vertex's unvisited neighbours
// queued by ascending degree; the whole sequence reversed. Renumbering rows and columns alike
// (partition/symmetric_permutation.hpp) puts every entry near the diagonal when the graph has
// small level sets (meshes, stencils, FEM, bands), whatever the caller's numbering: a
// renumbered mesh gets back a band, its x gathers local again.

#include <cstdint>
#include <vector>

#include "core/csr_matrix.hpp"

namespace spmvd {

// The RCM order of a square matrix: entry i is the original row (and column) placed at
// position i, a permutation of 0 .. rows-1. Deterministic: a function of the pattern alone (the
// values and the order of duplicate entries do not matter), the same on every call and thread.
// O(nnz log max degree) time, O(nnz) memory (the symmetrised pattern as a CSR graph);
// thread-safe (no shared state). Throws Error(invalid_argument) for a matrix that is not square
// ("rcm_order: the matrix is 3 x 5; RCM renumbers rows and columns alike and needs a square
// matrix") or rows >= 2^31.
std::vector<std::int32_t> rcm_order(const CsrMatrix<double>& m);

}  // namespace spmvd
