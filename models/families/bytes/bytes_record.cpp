#include "models/families/bytes/bytes_record.hpp"

#include <string>

#include "models/fit_json.hpp"
#include "models/record_presentation.hpp"

namespace spmvd {

void add_to_summary(const BytesRecord& record, nlohmann::json& summary) {
  if (record.shared) {
    nlohmann::json fit = record.shared->time_vs_bytes;
    fit["bandwidth_bytes_per_ms"] = record.shared->bandwidth_bytes_per_ms();
    fit["l2_share_for_x"] = record.shared->l2_share_for_x;
    fit["banded_ratio"] = record.shared->banded_ratio;
    add_fit_row(summary, "bytes", nullptr, "ms_vs_bytes", "linear", std::move(fit));
  }
  for (const FormatBytesCalibration& own : record.formats) {
    nlohmann::json fit = own.bytes.time_vs_bytes;
    fit["bandwidth_bytes_per_ms"] = own.bytes.bandwidth_bytes_per_ms();
    fit["banded_ratio"] = own.bytes.banded_ratio;
    fit["format"] = own.format.value;
    fit["params"] = to_string(own.params);
    fit["long_row_step_ms"] = own.long_row_step_ms;
    fit["floor_ms"] = own.floor_ms;
    add_fit_row(summary, "format_bytes", nullptr, "ms_vs_bytes", "linear", std::move(fit));
  }
}

std::vector<NamedSvg> plots_of(const BytesRecord& record, Precision precision) {
  if (!record.shared || record.shared->samples.empty()) return {};
  const std::string device = " (" + std::string(to_string(precision)) + ")";
  const LinearFit fit = record.shared->time_vs_bytes;
  return {{std::string(to_string(precision)) + "_bytes.svg",
           plot_fit_svg(record.shared->samples, [fit](double x) { return fit(x); },
                        {.title = "bytes model" + device + ": launch overhead + bytes / bandwidth",
                         .x_label = "bytes moved",
                         .y_label = "ms",
                         .log_x = true,
                         .log_y = true})}};
}

}  // namespace spmvd
