#pragma once
// What the warps of an ELL kernel walk when each row stops at its first padding slot
// (grouped_slot_sum in spmv_device.cuh: cuda_ell, cuda_hyb's ELL part): the slots are loaded in
// groups whose loads are issued together, so a row walks on to the end of the group that holds
// its first padding slot, and a warp walks (and moves the bytes of) the longest walk of its
// rows. Pure C++, for the models (the ell family; cuda_bce's warps, whose rows stop at their
// lengths, take expected_warp_walk alone).

#include <cstdint>
#include <span>
#include <vector>

#include "core/matrix_features.hpp"

namespace spmvd {

// The rows of `sets` (a DF or a slice of one, ascending; empty rows as length 0) as the slots
// they walk: groups of `group` slots from slot 0 until the group that holds slot l (a row's
// first padding slot), cut at `width`: a row of length l < width walks min(width, group
// (floor(l / group) + 1)), one of the width walks the width. Equal walks merged.
std::vector<RowLengthCount> padding_stop_walks(std::span<const RowLengthCount> sets,
                                               std::int64_t width, std::int64_t group);

// The expected longest length among `independent_rows` rows drawn from `sets` (ascending):
// the slots a warp walks when its rows are independent draws from the DF (32 rows a warp at one
// lane a row; 32 / L at L lanes a row). Sum over lengths l of l (F(l)^R - F(l-1)^R), F the
// cumulative share of rows. 0 for no rows.
double expected_warp_walk(std::span<const RowLengthCount> sets, double independent_rows);

// The slots a warp walks in an ELL of this width whose every row fits it: each row stops with
// the group of four slots that holds its first padding slot (grouped_slot_sum), so a warp walks
// the longest such walk of its 32 rows, not the width (rows drawn independently from the DF).
// Where some row is longer than the width, the width is already a walk (a composed format's
// part priced at what its warps walk: cuda_bce, cuda_strip) and is kept, as it is without a
// DF. An empty row walks the first group. At least one slot.
std::int64_t ell_walked_width(const MatrixFeatures& features, std::int64_t width);

// The same of an ELL part of this width whose rows beyond it go on elsewhere (cuda_hyb's ELL
// part, its COO part holding the rest): every row walks at most the width.
std::int64_t cut_ell_walked_width(const MatrixFeatures& features, std::int64_t width);

}  // namespace spmvd
