#pragma once
// Synthetic sparse matrices for benchmarks and tests, described by a spec string
// "kind:key=value,key=value" (e.g. "stencil2d:n=2000,points=5"). Every generator is
// deterministic for a given spec (std::mt19937_64 seeded with `seed`, default 1), O(nnz) in
// time and memory (powerlaw: O(edges * scale)), single-threaded, and returns a matrix that
// passes validate(): sorted, duplicate-free columns and values uniform in [-1, 1).
//
// Kinds and keys (all values are decimal integers; every kind also takes seed=N):
//   stencil2d  n, points=5|9          n*n grid, 5-point (+) or 9-point (3x3) neighbourhood
//   stencil3d  n, points=7|27         n*n*n grid, 7-point (+) or 27-point (3x3x3) neighbourhood
//   banded     rows, bandwidth        square, every |i-j| <= bandwidth present (full band)
//   random     rows, cols, per_row    exactly per_row uniform random columns in every row
//   powerlaw   scale, edge_factor,    R-MAT graph of 2^scale vertices and edge_factor*2^scale
//              permute=1              edges, a=.57 b=.19 c=.19 d=.05 (Graph500 / Chakrabarti et
//                                     al. 2004); duplicate edges merged, vertex labels randomly
//                                     permuted unless permute=0
//   circuit    rows, dense_rows,      square; sparse rows hold the diagonal plus 1-5 neighbours
//              dense_len              (mostly within +-16 rows, one in eight anywhere); dense_rows
//                                     rows at random positions hold dense_len random columns
//   road       rows, window=64        square; each row has 2-4 columns within +-window of the
//                                     diagonal (no diagonal entry), like a spatially ordered
//                                     road network
//   widerows   rows, cols, per_row    row lengths uniform in [per_row/2, 3*per_row/2] (clamped
//                                     to cols), random columns
//   fem        blocks, block,         blocks*block rows; node i couples to itself and
//              coupling               `coupling` nodes within +-2*coupling nodes; every coupling
//                                     is a dense block x block block (as in a vector-valued FEM)

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/csr_matrix.hpp"
#include "models/sample_generators.hpp"  // renumber_symmetric

namespace spmvd {

// A parsed spec: syntax only, values not yet checked against the kind.
struct GeneratorSpec {
  std::string kind;
  std::vector<std::pair<std::string, std::string>> params;  // in spec order
};

// The generator kinds, in the order documented above.
const std::vector<std::string_view>& generator_kinds();

// True when `text` starts with "<known kind>:" (how CLIs tell a spec from a file path).
bool looks_like_generator_spec(std::string_view text);

// Splits "kind:key=value,...". Throws Error(invalid_argument) naming the offending part:
// a missing ':', an unknown kind, a parameter without '=', an empty or repeated key.
GeneratorSpec parse_generator_spec(std::string_view text);

// Generates the matrix a spec describes. Throws Error(invalid_argument) naming the key that
// is missing, unknown to the kind, not an integer, or out of range
// ("stencil2d: key 'points' must be 5 or 9, got 7").
CsrMatrix<double> generate_matrix(const GeneratorSpec& spec);
CsrMatrix<double> generate_matrix(std::string_view spec);

// `copies` copies of `m` along the diagonal: rows*copies x cols*copies, nnz*copies. Used to
// push a real matrix past the L2 size for memory-bound benchmarks (results labelled derived).
// Throws Error(invalid_argument) when copies < 1 or the result exceeds the 32-bit column
// index range.
CsrMatrix<double> replicate_block_diagonal(const CsrMatrix<double>& m, std::int64_t copies);


}  // namespace spmvd
