#pragma once
// The ell calibration stage (paper 004 Fig. 5): cuda_ell on a grid of widths x rows (powers of
// 2 and 4) per block size, the banded twins at kBandedEllWidths on one block size, and the fit
// of its records (EllCalibration: log-grid fits of time and of the banded ratio).

#include <cstdint>

#include "models/calibration/stage.hpp"
#include "models/families/ell/ell_record.hpp"

namespace spmvd {

// ELL widths whose samples get a banded twin (at every rows): around the 5-30 entries per row
// of stencil and FEM matrices, and a short and a long end.
inline constexpr std::int64_t kBandedEllWidths[] = {2, 8, 32};

// The ELL grid's row axis starts here: below a few thousand rows every shape costs one launch.
inline constexpr std::int64_t kEllMinRows = 4096;

// The stage's entry in calibration_stages().
CalibrationStageSpec ell_stage();

}  // namespace spmvd
