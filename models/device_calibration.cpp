#include "models/device_calibration.hpp"

#include <exception>
#include <nlohmann/json.hpp>

#include "core/error.hpp"

namespace spmvd {
namespace {

// One field list for DeviceInfo, both directions (STYLE.md: (de)serialisation from one list).
template <typename Info, typename Visit>
void for_each_device_field(Info& d, Visit&& visit) {
  visit("is_gpu", d.is_gpu);
  visit("name", d.name);
  visit("compute_capability_major", d.compute_capability_major);
  visit("compute_capability_minor", d.compute_capability_minor);
  visit("sm_count", d.sm_count);
  visit("memory_bytes", d.memory_bytes);
  visit("l2_bytes", d.l2_bytes);
  visit("warp_size", d.warp_size);
  visit("max_threads_per_sm", d.max_threads_per_sm);
  visit("max_blocks_per_sm", d.max_blocks_per_sm);
  visit("registers_per_sm", d.registers_per_sm);
  visit("shared_memory_per_sm_bytes", d.shared_memory_per_sm_bytes);
  visit("driver_version", d.driver_version);
  visit("runtime_version", d.runtime_version);
  visit("cusparse_version", d.cusparse_version);
  visit("host", d.host);
}

nlohmann::json device_to_json(const DeviceInfo& device) {
  nlohmann::json j = nlohmann::json::object();
  for_each_device_field(device, [&j](const char* name, const auto& value) { j[name] = value; });
  return j;
}

DeviceInfo device_from_json(const nlohmann::json& j) {
  DeviceInfo device;
  for_each_device_field(device, [&j](const char* name, auto& value) { j.at(name).get_to(value); });
  return device;
}

}  // namespace

bool operator==(const DeviceCalibration& a, const DeviceCalibration& b) {
  return device_to_json(a.device) == device_to_json(b.device) && a.fp32 == b.fp32 &&
         a.fp64 == b.fp64;
}

std::string device_calibration_to_json(const DeviceCalibration& calibration) {
  const nlohmann::json j = {
      {"model_version", kModelVersion},
      {"device_signature", calibration.device.signature()},
      {"device", device_to_json(calibration.device)},
      {"fp32", nlohmann::json::parse(model_set_to_json(calibration.fp32))},
      {"fp64", nlohmann::json::parse(model_set_to_json(calibration.fp64))},
  };
  return j.dump();  // compact: it is stored per device; model_set_summary is for reading
}

DeviceCalibration device_calibration_from_json(const std::string& text,
                                               const std::string& expected_device_signature) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const std::exception& e) {
    throw Error(ErrorCode::invalid_argument, std::string("device calibration JSON: ") + e.what());
  }
  if (!j.is_object() || !j.contains("model_version") || !j["model_version"].is_number_integer())
    throw Error(ErrorCode::invalid_argument, "device calibration JSON: no integer model_version");
  const int version = j["model_version"].get<int>();
  if (version != kModelVersion) {
    throw Error(ErrorCode::failed_precondition,
                "device calibration has model_version " + std::to_string(version) +
                    ", this build uses model_version " + std::to_string(kModelVersion) +
                    ": recalibrate");
  }
  DeviceCalibration calibration;
  std::string signature;
  try {
    signature = j.at("device_signature").get<std::string>();
    calibration.device = device_from_json(j.at("device"));
  } catch (const std::exception& e) {
    throw Error(ErrorCode::invalid_argument, std::string("device calibration JSON: ") + e.what());
  }
  if (signature != expected_device_signature) {
    throw Error(ErrorCode::failed_precondition, "device calibration was made on device \"" +
                                                    signature + "\", this device is \"" +
                                                    expected_device_signature + "\": recalibrate");
  }
  if (calibration.device.signature() != signature) {
    throw Error(ErrorCode::invalid_argument,
                "device calibration JSON: its \"device\" has signature \"" +
                    calibration.device.signature() + "\", not its device_signature \"" + signature +
                    "\"");
  }
  // model_set_from_json checks each set's version, device and precision again.
  try {
    calibration.fp32 = model_set_from_json(j.at("fp32").dump(), signature, Precision::fp32);
    calibration.fp64 = model_set_from_json(j.at("fp64").dump(), signature, Precision::fp64);
  } catch (const Error& e) {
    throw Error(ErrorCode::invalid_argument, std::string("device calibration JSON: ") + e.what());
  } catch (const std::exception& e) {
    throw Error(ErrorCode::invalid_argument, std::string("device calibration JSON: ") + e.what());
  }
  return calibration;
}

DeviceCalibration calibrate_device(const FormatRegistry& registry, Device& device,
                                   const CalibrationOptions& options,
                                   const CalibrationProgressFn& on_progress) {
  DeviceCalibration calibration;
  calibration.device = device.info();
  for (const Precision precision : {Precision::fp32, Precision::fp64}) {
    CalibrationProgressFn prefixed;
    if (on_progress) {
      prefixed = [&on_progress, precision](const CalibrationProgress& p) {
        CalibrationProgress named = p;
        named.stage = std::string(to_string(precision)) + " " + p.stage;
        on_progress(named);
      };
    }
    ModelSet set = calibrate_precision(registry, device, precision, options, prefixed);
    (precision == Precision::fp32 ? calibration.fp32 : calibration.fp64) = std::move(set);
  }
  return calibration;
}

}  // namespace spmvd
