#pragma once
// BAR, the BRO-aware row reordering of paper 001 (Tang et al., SC'13, Sec. 3.4): rows are
// clustered into slices of h rows so that a slice's delta columns need few bits and its x reads
// touch few cache lines, the objective of Eq. 1, by the greedy heuristic of Algorithm 2.
//
// Eq. 1 for slices S_1 .. S_v of h rows:
//   Phi = sum_i h/w * ( ceil( sum_j d(S_i, j) / alpha ) + sum_j c(S_i, j) )
// d(S, j) (Eq. 2): the bits of the widest delta in column j of the slice; c(S, j) (Eq. 3): the
// distinct x cache lines that column j of the slice reads; alpha: the symbol length (32 bits);
// w: the warp size (32). A line holds kBarXEntriesPerLine entries of x.
//
// Algorithm 2 compares every row with every slice of the matrix (O(rows^2 / h) evaluations).
// Here it runs on consecutive windows of kBarWindowSlices slices, which keeps it O(nnz *
// window slices) and keeps a row near its original neighbours (their x lines); within a window
// it is the paper's: rows sorted by length, slice t seeded with sorted row t*h, each further row
// (in sorted order) put in the non-full slice whose Phi grows least (ties: the lower slice).
// A window keeps its original order unless the greedy clustering's Phi is lower than the
// identity's and its BRO-ELL layout (stream words, bit_alloc columns, value slots) is no larger,
// so Phi(bar_order) <= Phi(identity) always (the greedy alone does not promise it; the paper
// reports BAR losing on `cant`), and the BAR layout's sizes never exceed the identity order's:
// Phi also counts x cache lines, so a lower Phi alone could buy fewer lines with a longer
// stream or more padding. The rules use that bound as BAR's device bytes without running BAR.

#include <cstdint>
#include <span>
#include <vector>

#include "core/csr_matrix.hpp"

namespace spmvd::bro {

inline constexpr std::uint32_t kBarSymbolBits = 32;      // alpha of Eq. 1
inline constexpr std::uint32_t kBarWarpSize = 32;        // w of Eq. 1
inline constexpr std::int64_t kBarXEntriesPerLine = 16;  // a 128-byte line of fp64 x
inline constexpr std::uint32_t kBarWindowSlices = 8;

// Phi (Eq. 1) of the slices formed by consecutive runs of `slice_height` rows of
// permute_rows(m, order) (the last slice may be shorter). Throws Error(invalid_argument) for
// slice_height 0 or an order that is not a permutation of the rows.
double bar_objective(const CsrMatrix<double>& m, std::span<const std::int32_t> order,
                     std::uint32_t slice_height);

// The BAR row order: entry i is the original row placed at position i. A permutation of
// 0 .. rows-1; deterministic. Throws Error(invalid_argument) for slice_height 0,
// window_slices 0 or rows >= 2^31.
std::vector<std::int32_t> bar_order(const CsrMatrix<double>& m, std::uint32_t slice_height,
                                    std::uint32_t window_slices = kBarWindowSlices);

}  // namespace spmvd::bro
