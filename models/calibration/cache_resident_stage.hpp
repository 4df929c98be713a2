#pragma once
// The cache_resident calibration stage, a correction across families, run last: every
// csr_vector, coo and format_bytes variant again on a grid of random samples inside L2
// (CalibrationOptions::cache_resident_rows x cache_resident_row_lengths), measured / predicted
// by the set the stages before it fitted, and the banded twin of each (T_banded / T_random on
// the same grid): ModelSet::cache_resident (models/cache_resident.hpp).

#include "models/calibration/stage.hpp"

namespace spmvd {

// The stage's entry in calibration_stages().
CalibrationStageSpec cache_resident_stage();

}  // namespace spmvd
