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

namespace {

// The line of a bytes fit: intercept in µs, bandwidth in GB/s (bytes per ms * 1e3 / 1e9).
TableRow bytes_line_cells(const BytesCalibration& bytes) {
  return {number_cell(1e3 * bytes.time_vs_bytes.intercept, "%.2f"),
          number_cell(1e-6 * bytes.bandwidth_bytes_per_ms(), "%.0f")};
}

}  // namespace

std::vector<FamilyTable> tables_of(const BytesRecord& record) {
  FamilyTable shared{
      .name = std::string(BytesRecord::kFamily),
      .title = "every format without its own model; ms against bytes moved",
      .headers = with_quality_headers({"intercept µs", "GB/s", "L2 share for x", "banded ρ"})};
  if (record.shared) {
    TableRow cells = bytes_line_cells(*record.shared);
    cells.insert(cells.end(), {number_cell(record.shared->l2_share_for_x, "%.2f"),
                               ratio_range_cell(record.shared->banded_ratio)});
    shared.rows.push_back(
        with_quality_cells(std::move(cells), record.shared->time_vs_bytes.quality));
  }
  FamilyTable own{.name = "format_bytes",
                  .title = "a bytes fit per format and parameters",
                  .headers = with_quality_headers({"format", "params", "intercept µs", "GB/s",
                                                   "floor µs", "long-row step ns", "banded ρ"})};
  for (const FormatBytesCalibration& fit : record.formats) {
    TableRow cells = {format_name_cell(fit.format), to_string(fit.params)};
    for (std::string& cell : bytes_line_cells(fit.bytes)) cells.push_back(std::move(cell));
    cells.insert(cells.end(),
                 {number_cell(1e3 * fit.floor_ms, "%.2f"), number_cell(1e6 * fit.long_row_step_ms),
                  ratio_range_cell(fit.bytes.banded_ratio)});
    own.rows.push_back(with_quality_cells(std::move(cells), fit.bytes.time_vs_bytes.quality));
  }
  return {std::move(shared), std::move(own)};
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
