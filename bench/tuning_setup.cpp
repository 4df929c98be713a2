#include "bench/tuning_setup.hpp"

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/error.hpp"
#include "kernels/format_registry.hpp"
#include "kernels/formats/cusparse_csr/cusparse_csr_rules.hpp"
#include "tuner/tuner.hpp"

namespace spmvd {

DeviceCalibration read_device_calibration(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ErrorCode::not_found, "cannot read " + path);
  std::ostringstream text;
  text << in.rdbuf();
  const std::string signature =
      nlohmann::json::parse(text.str()).at("device_signature").get<std::string>();
  return device_calibration_from_json(text.str(), signature);
}

Candidate default_serving_candidate(const MatrixFeatures& features, const DeviceInfo& device) {
  const FormatEntry* entry = format_registry().find(kCusparseCsrFormatId);
  if (entry != nullptr)
    for (const Candidate& c : entry->rules->candidates(features, device))
      if (is_baseline_candidate(c)) return c;
  throw Error(ErrorCode::failed_precondition, "no cuSPARSE CSR ALG1 candidate");
}

}  // namespace spmvd
