#pragma once
// The cache_resident calibration stage, a correction across families, run last: every
// csr_vector, coo and format_bytes variant again on a grid of random samples inside L2
// (CalibrationOptions::cache_resident_rows x cache_resident_row_lengths), measured / predicted
// by the set the stages before it fitted, and the banded twin of each (T_banded / T_random on
// the same grid): ModelSet::cache_resident (models/cache_resident.hpp). A grid point whose CSR,
// x and y exceed the device's L2 is not planned.

#include <vector>

#include "models/calibration/stage.hpp"
#include "models/fitting.hpp"

namespace spmvd {

// `grid` on the full product of its row lengths and rows: each cell it has no sample of (a
// point beyond L2, never planned, or one its format is not offered at) takes the value of the
// cell of the same row length nearest in log rows (the fewer rows on a tie), so that beyond its
// samples the grid is clamped, as LogGridFit is beyond its edge (correction_weight fades kappa
// out towards L2). Sampled cells are kept as they are, first, in their order.
std::vector<GridSample> complete_grid_by_rows(std::vector<GridSample> grid);

// The stage's entry in calibration_stages().
CalibrationStageSpec cache_resident_stage();

}  // namespace spmvd
