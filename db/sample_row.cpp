#include "db/sample_row.hpp"

#include <cmath>
#include <limits>

#include "core/error.hpp"

namespace spmvd {

SampleRow sample_row(const MeasurementSample& sample, std::int64_t recorded_ms) {
  if (sample.device_signature.empty()) throw_invalid("measurement sample: no device signature");
  if (sample.fingerprint.empty()) throw_invalid("measurement sample: no matrix fingerprint");
  if (!(sample.measured.measured_ms > 0.0) || !std::isfinite(sample.measured.measured_ms)) {
    throw_invalid("measurement sample of format " + sample.measured.format_name + ": measured_ms " +
                  std::to_string(sample.measured.measured_ms) + " is not a positive time");
  }
  return SampleRow{.device = sample.device_signature,
                   .precision = static_cast<std::int64_t>(sample.measured.precision),
                   .format_id = sample.measured.format.value,
                   .fingerprint = sample.fingerprint,
                   .tuned_ms = sample.tuned_ms,
                   .model_version = sample.model_version,
                   .predicted_ms = sample.measured.predicted_ms,
                   .measured_ms = sample.measured.measured_ms,
                   .sample_json = plan_to_json(sample.measured),
                   .recorded_ms = recorded_ms};
}

std::variant<MeasurementSample, std::string> decode_sample_row(const SampleRow& row) {
  MeasurementSample sample;
  try {
    sample.measured = plan_from_json(row.sample_json);
  } catch (const Error& e) {
    return std::string(e.what());
  }
  if (row.precision != static_cast<std::int64_t>(sample.measured.precision) ||
      row.format_id != sample.measured.format.value) {
    return "columns (precision " + std::to_string(row.precision) + ", format_id " +
           std::to_string(row.format_id) + ") disagree with sample_json";
  }
  if (row.model_version < 0 || row.model_version > std::numeric_limits<std::uint32_t>::max())
    return "model_version " + std::to_string(row.model_version) + " is out of range";
  sample.device_signature = row.device;
  sample.fingerprint = row.fingerprint;
  sample.tuned_ms = row.tuned_ms;
  sample.model_version = static_cast<std::uint32_t>(row.model_version);
  sample.recorded_ms = row.recorded_ms;
  return sample;
}

}  // namespace spmvd
