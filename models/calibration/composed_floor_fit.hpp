#pragma once
// The launch floors of the composed formats whose parts share one launch
// (models/composed_launch_floors.hpp), a finishing fit (calibration_finishing_fits): each such
// format's candidates on the latency stage's tiny sample (kLatencySampleRows rows of 4), one
// per distinct parameters (at most kComposedFloorVariants), built and timed as every sample
// is. Nothing on a CPU device, where no composed format runs.

#include <cstddef>

#include "models/calibration/stage.hpp"

namespace spmvd {

// BCE offers two kernels (paper, hopper) on a matrix of one row length.
inline constexpr std::size_t kComposedFloorVariants = 4;

void fit_composed_launch_floors(const FinishingFitInput& in);

}  // namespace spmvd
