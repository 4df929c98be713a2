#pragma once
// How the hopper kernel finds where each row of a BCE block ends, and what its warps then walk.
// A block whose rows all have one length ends every row at its width. Otherwise a row ends
// either at its own length, read from the rows' lengths (4 bytes a row), or at its first
// padding slot (column kPaddingColumn), as cuda_ell's rows do: the slots are walked four at a
// time with their loads issued together, so a row stops with the group that holds its first
// padding slot and reads up to three padding slots (index and value) past its end. Neither is
// free; the cheaper in bytes is chosen per block (bce_block_reads_lengths). A stencil's one
// block (rows of 3, 4 and 5, nearly all 5) reads no padding a warp would not read anyway, and
// the lengths were 4 of its 64-72 bytes a row (fp64: BCE 4-11 % behind our ELL on the
// stencils and the band, H100 2026-12-07, docs/BENCHMARKS.md); a block of mostly short rows
// with a few long ones ends most warps' walks early, where three slots past the end cost more
// than the length.
// Pure C++: the layout's descriptors (bce_tile_descriptors) and the model's parts
// (cuda_bce_rules.cpp) take the same decision from the block's DF slice.

#include <cstdint>
#include <span>
#include <vector>

#include "core/matrix_features.hpp"

namespace spmvd {

// Rows shared by `walkers` (lanes, warps) as the rows each walker walks: every row of `length`
// slots is `walkers` rows of ceil(length / walkers) slots (the same slots and bytes, the chain
// each walker walks). The sets are ascending, so equal lengths are neighbours: merged as they
// come, without a map (OPA prices up to 8,256 blocks a matrix); part_features merges any that
// are not. The identity at one walker.
std::vector<RowLengthCount> bce_walked_rows(std::span<const RowLengthCount> sets,
                                            std::int64_t walkers);

// The slots a warp of the hopper kernel walks in a block of these one-lane rows (bce_walked_rows
// of the block's DF slice, ascending): each row stops at its own end, so the warp walks the
// longest of its 32, not the block's width (the paper variant walks the width, padding and
// all). Expected over rows drawn independently from the slice (a block keeps its rows' order,
// so a warp's rows are neighbours only in the caller's order; the `lanes` lanes of one row
// walk alike, so a warp holds 32 / lanes independent rows): sum over lengths l of
// l (F(l)^R - F(l-1)^R), F the cumulative share of rows, R = 32 / lanes. Not rounded: the
// expected walk. 0 for no rows.
double bce_warp_walked_width(std::span<const RowLengthCount> sets, std::int32_t lanes);

// The block's DF slice (ascending) as its rows walk it when each stops at its first padding
// slot: a row of length l < W (the block's width, its longest row) is walked past the block's
// shortest row m (those slots are in every row, walked first) in groups of 4 x lanes slots
// until the group that holds slot l, so to min(W, m + 4 lanes (floor((l - m) / (4 lanes)) + 1)).
// Lengths merged where they meet.
std::vector<RowLengthCount> bce_padding_stop_lengths(std::span<const RowLengthCount> sets,
                                                     std::int32_t lanes);

// Whether the hopper kernel reads the lengths of this block's rows (else each row ends at the
// block's width or its first padding slot). The block's DF slice (ascending) and its lanes a
// row (bce_lanes_per_row). No where the rows have one length (nothing to find) or the block is
// empty; yes beyond 4 lanes a row (a warp or a whole CUDA block a row: a group of four steps is
// 128+ slots, and a row that long pays 4 bytes for its length many times over); else yes
// exactly where the padding a warp reads past its rows' ends (bce_warp_walked_width of
// bce_padding_stop_lengths over the rows' own lengths) costs more bytes than a length a row.
// A padding slot is priced as in fp64 (a 4-byte index and an 8-byte value, so 1/3 of a slot a
// row against a length) in both precisions: the model's parts, which take the same decision,
// know no precision, and in fp32 (8 bytes a slot, break-even at 1/2) the fp64 rule errs only
// between the two, by at most 4/3 bytes a row.
bool bce_block_reads_lengths(std::span<const RowLengthCount> sets, std::int32_t lanes);

}  // namespace spmvd
