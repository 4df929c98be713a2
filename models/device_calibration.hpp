#pragma once
// Both precisions' model sets of one device, and the device they were calibrated on: what
// spmv-calibrate writes and what the daemon stores with PlanStore::put_calibration(
// device_signature, kModelVersion, json) and reads back at start-up.

#include <string>

#include "core/device_info.hpp"
#include "core/precision.hpp"
#include "kernels/device.hpp"
#include "kernels/format_registry.hpp"
#include "models/calibration.hpp"
#include "models/model_set.hpp"

namespace spmvd {

struct DeviceCalibration {
  // The calibrated device as it reported itself: its per-SM limits and L2 let predictions be
  // made off the device (model-accuracy reads them); device.signature() is the storage key.
  DeviceInfo device;
  ModelSet fp32;
  ModelSet fp64;
  // fp32 or fp64.
  const ModelSet& for_precision(Precision precision) const noexcept {
    return precision == Precision::fp32 ? fp32 : fp64;
  }
};
// Every DeviceInfo field and both model sets equal (DeviceInfo has no == of its own).
bool operator==(const DeviceCalibration& a, const DeviceCalibration& b);

// JSON text: {"model_version", "device_signature", "device": {every DeviceInfo field},
// "fp32": <model set>, "fp64": <model set>} (model sets as model_set_to_json writes them).
std::string device_calibration_to_json(const DeviceCalibration& calibration);

// Parses text written by device_calibration_to_json. Throws Error(failed_precondition) naming
// both values when its model_version is not kModelVersion or its device signature is not
// expected_device_signature (in that order; recalibrate), Error(invalid_argument) naming the
// problem when the text is not a device calibration (a missing field, a model set of the wrong
// precision, a "device" whose signature is not "device_signature").
DeviceCalibration device_calibration_from_json(const std::string& text,
                                               const std::string& expected_device_signature);

// Calibrates fp32 then fp64 on `device` (calibrate_precision). on_progress's stage is prefixed
// with the precision ("fp32 csr_vector"). Throws what calibrate_precision throws.
DeviceCalibration calibrate_device(const FormatRegistry& registry, Device& device,
                                   const CalibrationOptions& options,
                                   const CalibrationProgressFn& on_progress);

}  // namespace spmvd
