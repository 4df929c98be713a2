#pragma once
// What the host-side tuning benchmarks (ranking-timing, feature_timing) set up as the daemon
// would for one matrix: a calibration read from its JSON file, the default plan serving.

#include <string>

#include "core/matrix_features.hpp"
#include "kernels/candidate.hpp"
#include "kernels/device.hpp"
#include "models/device_calibration.hpp"

namespace spmvd {

// The calibration in `path` (spmv-calibrate --out), read for the device signature it names.
DeviceCalibration read_device_calibration(const std::string& path);

// The default plan a matrix is served by while it is tuned (server/engine.cpp default_plan):
// cuSPARSE CSR ALG1. Throws Error(failed_precondition) where it is not admissible.
Candidate default_serving_candidate(const MatrixFeatures& features, const DeviceInfo& device);

}  // namespace spmvd
