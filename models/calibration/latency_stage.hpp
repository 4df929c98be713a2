#pragma once
// The latency calibration stage, a correction across families, run first: per threads_per_row
// (block kLatencyBlockSize) a tiny sample (the launch floor of every prediction,
// ModelSet::launch_floor_ms, and the csr_vector fixed cost) and a sample with one row of
// kLongRowLength non-zeros against the same matrix without it (the critical-path step,
// CsrVectorCalibration::long_row_step_ms), in L2 and beyond. Its measurements complete the
// csr_vector records (CalibrationState::lane_latency).

#include <cstdint>

#include "models/calibration/stage.hpp"

namespace spmvd {

// The block size of the latency samples: a latency does not depend on it.
inline constexpr std::uint32_t kLatencyBlockSize = 256;

// The stage's entry in calibration_stages().
CalibrationStageSpec latency_stage();

}  // namespace spmvd
