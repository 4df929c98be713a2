#pragma once
// Every fitted model of one device and precision: what calibration produces, the plan cache
// stores per device signature, and the tuner ranks candidates with (models/model_predictor.hpp).

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/precision.hpp"
#include "models/blocked_ell_time_model.hpp"
#include "models/families/bytes/bytes_model.hpp"
#include "models/cache_resident.hpp"
#include "models/families/coo/coo_model.hpp"
#include "models/cpu_gpu_time_model.hpp"
#include "models/families/csr_vector/csr_vector_model.hpp"
#include "models/families/ell/ell_model.hpp"
#include "models/measured_refit.hpp"

namespace spmvd {

// The form of the models: bump on any change of a fit, a calibration record, a field or what a
// model computes from them. Plans record the version that chose them; a stored model set of
// another version is refused and recalibrated.
// 15: measured_refit, the per-format factors refitted from the tuner's measurements.
inline constexpr int kModelVersion = 16;

struct ModelSet {
  std::string device_signature;  // DeviceInfo::signature() of the calibrated device
  Precision precision = Precision::fp64;
  std::vector<CsrVectorCalibration> csr_vector;
  std::vector<EllCalibration> ell;
  std::vector<CooCalibration> coo;
  std::optional<BytesCalibration> bytes;
  // Per-format bytes fits (calibration stage format_bytes): used for a format without a
  // dedicated model in place of `bytes`, which stays the fallback for unlisted formats.
  std::vector<FormatBytesCalibration> format_bytes;
  // Per calibrated variant, its measured / predicted time on cache-resident samples
  // (models/cache_resident.hpp); empty where the stage failed.
  std::vector<CacheResidentCorrection> cache_resident;
  std::optional<BlockedEllTimeCoefficients> blocked_ell;  // paper 000
  std::optional<CpuGpuTimeCoefficients> cpu_gpu;          // paper 003
  // The least time any multiply takes on this device (launch and completion latency), measured
  // on a tiny calibration sample; every prediction is at least this. 0: not calibrated.
  double launch_floor_ms = 0.0;
  // Per format, the factor refitted from the tuner's measured samples (`spmvctl model refit`,
  // models/measured_refit.hpp); empty until a refit is accepted.
  std::vector<MeasuredRefitFactor> measured_refit;
  friend bool operator==(const ModelSet&, const ModelSet&) = default;
};

// JSON text with "model_version" = kModelVersion.
std::string model_set_to_json(const ModelSet& set);

// Parses text written by model_set_to_json. Throws Error(failed_precondition) naming both values
// when its model_version is not kModelVersion, its device signature is not
// expected_device_signature or its precision is not expected_precision (checked in that order);
// Error(invalid_argument) naming the problem when the text is not a valid model set.
ModelSet model_set_from_json(const std::string& text, const std::string& expected_device_signature,
                             Precision expected_precision);

// For `spmvctl model show` (client/model_table.hpp): {"model_version", "device_signature",
// "precision", "fits": [{"family", "variant": {"block_size", "threads_per_row", COO's
// "entries_per_thread"}, "curve", "kind", coefficients..., "quality": {"sample_count",
// "rms_relative_error", "max_relative_error", "x_min", "x_max"}}...], and the paper 000 / 003
// coefficients where present}.
nlohmann::json model_set_summary(const ModelSet& set);

}  // namespace spmvd
