#pragma once
// The coo calibration stage (paper 004 Fig. 6): cuda_coo (cpu_coo on the CPU) at doubling
// non-zero counts per entries per thread E and block size, the largest size's banded twin, and
// the fit of its records (CooCalibration: ms against non-zeros).

#include "models/calibration/stage.hpp"
#include "models/families/coo/coo_record.hpp"

namespace spmvd {

// The stage's entry in calibration_stages().
CalibrationStageSpec coo_stage();

}  // namespace spmvd
