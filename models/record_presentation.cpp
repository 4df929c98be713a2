#include "models/record_presentation.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <utility>

#include "kernels/format_registry.hpp"

namespace spmvd {

nlohmann::json kernel_variant_json(const CalibratedKernel& kernel) {
  return {{"block_size", kernel.resources.threads_per_block},
          {"threads_per_row", kernel.threads_per_row},
          {"registers_per_thread", kernel.resources.registers_per_thread}};
}

void add_fit_row(nlohmann::json& summary, const char* family, const nlohmann::json& variant,
                 const char* curve, const char* kind, nlohmann::json fit) {
  fit["family"] = family;
  fit["curve"] = curve;
  fit["kind"] = kind;
  if (!variant.is_null()) fit["variant"] = variant;
  if (!summary.contains("fits")) summary["fits"] = nlohmann::json::array();
  summary["fits"].push_back(std::move(fit));
}

nlohmann::json ratio_table(const LogGridFit& grid, const char* axis) {
  nlohmann::json table = nlohmann::json::array();
  for (std::size_t r = 0; r < grid.rows.size(); ++r)
    for (std::size_t w = 0; w < grid.widths.size(); ++w)
      table.push_back({{axis, grid.widths[w]},
                       {"rows", grid.rows[r]},
                       {"ratio", std::exp(grid.log_ms[r * grid.widths.size() + w])}});
  return table;
}

std::string kernel_variant_file_suffix(const CalibratedKernel& kernel) {
  std::string name;
  if (kernel.threads_per_row > 0) name += "_t" + std::to_string(kernel.threads_per_row);
  if (kernel.resources.threads_per_block > 0)
    name += "_b" + std::to_string(kernel.resources.threads_per_block);
  return name;
}

std::string kernel_variant_title(const CalibratedKernel& kernel) {
  std::string title;
  if (kernel.threads_per_row > 0)
    title += ", " + std::to_string(kernel.threads_per_row) + " lanes/row";
  if (kernel.resources.threads_per_block > 0)
    title += ", block " + std::to_string(kernel.resources.threads_per_block);
  if (kernel.resources.registers_per_thread > 0)
    title += ", " + std::to_string(kernel.resources.registers_per_thread) + " regs";
  return title;
}

std::string number_cell(double value, const char* spec) {
  char text[64];
  std::snprintf(text, sizeof text, spec, value);
  return text;
}

std::string count_cell(std::int64_t value) { return std::to_string(value); }

std::string nonzero_count_cell(std::int64_t value) {
  return value == 0 ? kNoValue : count_cell(value);
}

std::string range_cell(double low, double high, const char* spec) {
  if (low == high) return number_cell(low, spec);
  return number_cell(low, spec) + "–" + number_cell(high, spec);
}

std::string range_of_cell(std::span<const double> values, const char* spec) {
  if (values.empty()) return kNoValue;
  const auto [low, high] = std::minmax_element(values.begin(), values.end());
  return range_cell(*low, *high, spec);
}

std::string axis_cell(std::span<const double> values) {
  if (values.empty()) return kNoValue;
  const bool whole = std::all_of(values.begin(), values.end(),
                                 [](double v) { return v == std::floor(v) && std::fabs(v) < 1e7; });
  const auto [low, high] = std::minmax_element(values.begin(), values.end());
  return range_cell(*low, *high, whole ? "%.0f" : "%.3g") + " (" + std::to_string(values.size()) +
         ")";
}

std::string ratio_range_cell(std::span<const SamplePoint> ratios) {
  std::vector<double> values;
  for (const SamplePoint& point : ratios) values.push_back(point.y);
  return range_of_cell(values, "%.2f");
}

std::string grid_ratio_range_cell(const LogGridFit& grid) {
  std::vector<double> values;
  for (const double log_ratio : grid.log_ms) values.push_back(std::exp(log_ratio));
  return range_of_cell(values, "%.2f");
}

std::string format_name_cell(FormatId format) {
  if (const FormatEntry* entry = format_registry().find(format))
    return std::string(entry->rules->name());
  return "format " + std::to_string(format.value);
}

TableRow kernel_variant_cells(const CalibratedKernel& kernel) {
  return {count_cell(kernel.resources.threads_per_block), count_cell(kernel.threads_per_row)};
}

TableRow with_quality_headers(TableRow headers) {
  for (const char* header : {"samples", "rms %", "max %"}) headers.emplace_back(header);
  return headers;
}

TableRow with_quality_cells(TableRow cells, const FitQuality& quality) {
  cells.push_back(count_cell(static_cast<std::int64_t>(quality.sample_count)));
  cells.push_back(number_cell(100.0 * quality.rms_relative_error, "%.1f"));
  cells.push_back(number_cell(100.0 * quality.max_relative_error, "%.1f"));
  return cells;
}

}  // namespace spmvd
