#include "client/model_table.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <optional>
#include <sstream>
#include <vector>

namespace spmvd {
namespace {

using Json = nlohmann::json;
using Row = std::vector<std::string>;

constexpr const char* kDash = "-";

struct Table {
  Row headers;
  std::vector<Row> rows;
};

// Columns are as wide as their widest cell in characters, not bytes (µ, ρ, κ, – are two or
// three bytes in UTF-8).
std::size_t display_width(const std::string& text) {
  return static_cast<std::size_t>(
      std::count_if(text.begin(), text.end(), [](char c) { return (c & 0xC0) != 0x80; }));
}

void print_table(std::ostream& out, const Table& table) {
  std::vector<std::size_t> widths(table.headers.size(), 0);
  const auto widen = [&widths](const Row& row) {
    for (std::size_t c = 0; c < row.size() && c < widths.size(); ++c)
      widths[c] = std::max(widths[c], display_width(row[c]));
  };
  widen(table.headers);
  for (const Row& row : table.rows) widen(row);
  const auto print_row = [&](const Row& row) {
    std::string line = "   ";
    for (std::size_t c = 0; c < widths.size(); ++c) {
      const std::string& cell = c < row.size() ? row[c] : std::string(kDash);
      line += "  " + cell + std::string(widths[c] - display_width(cell), ' ');
    }
    line.erase(line.find_last_not_of(' ') + 1);
    out << line << "\n";
  };
  print_row(table.headers);
  for (const Row& row : table.rows) print_row(row);
}

std::optional<double> number(const Json& object, const char* key) {
  if (!object.is_object() || !object.contains(key) || !object[key].is_number()) return std::nullopt;
  return object[key].get<double>();
}

std::string format(const char* spec, double value) {
  char text[64];
  std::snprintf(text, sizeof text, spec, value);
  return text;
}

// value * scale with printf spec, or "-" where the field is missing.
std::string scaled(const Json& object, const char* key, double scale, const char* spec = "%.3g") {
  const auto value = number(object, key);
  return value ? format(spec, *value * scale) : kDash;
}

std::string integer(const Json& object, const char* key, bool zero_is_dash = false) {
  const auto value = number(object, key);
  if (!value || (zero_is_dash && *value == 0.0)) return kDash;
  return format("%.0f", *value);
}

std::string range(double low, double high, const char* spec = "%.3g") {
  if (low == high) return format(spec, low);
  return format(spec, low) + "–" + format(spec, high);
}

// min–max over values; "-" when there are none.
std::string range_of(const std::vector<double>& values, const char* spec = "%.3g") {
  if (values.empty()) return kDash;
  const auto [low, high] = std::minmax_element(values.begin(), values.end());
  return range(*low, *high, spec);
}

// An axis of a grid: its range and point count, "1–64 (7)"; whole numbers below 10^7 in full.
std::string axis(const Json& fit, const char* key) {
  if (!fit.contains(key) || !fit[key].is_array() || fit[key].empty()) return kDash;
  std::vector<double> values;
  for (const Json& v : fit[key])
    if (v.is_number()) values.push_back(v.get<double>());
  if (values.empty()) return kDash;
  const auto [low, high] = std::minmax_element(values.begin(), values.end());
  const bool whole = std::all_of(values.begin(), values.end(),
                                 [](double v) { return v == std::floor(v) && std::fabs(v) < 1e7; });
  return range(*low, *high, whole ? "%.0f" : "%.3g") + " (" + std::to_string(values.size()) + ")";
}

// The range of ratios in a list of [x, ratio] points or of {..., "ratio"} objects.
std::string ratio_range(const Json& fit, const char* key) {
  if (!fit.contains(key) || !fit[key].is_array()) return kDash;
  std::vector<double> ratios;
  for (const Json& point : fit[key]) {
    if (point.is_array() && point.size() == 2 && point[1].is_number())
      ratios.push_back(point[1].get<double>());
    else if (const auto ratio = number(point, "ratio"))
      ratios.push_back(*ratio);
  }
  return range_of(ratios, "%.2f");
}

// A grid's values are logs (LogGridFit::log_ms): the range of their exponentials.
std::string exp_range(const Json& fit, const char* key) {
  if (!fit.contains(key) || !fit[key].is_array()) return kDash;
  std::vector<double> values;
  for (const Json& v : fit[key])
    if (v.is_number()) values.push_back(std::exp(v.get<double>()));
  return range_of(values, "%.2f");
}

// sample count, RMS % and max % of the fit's "quality".
Row quality_cells(const Json& fit) {
  const Json quality = fit.contains("quality") ? fit["quality"] : Json::object();
  return {integer(quality, "sample_count"), scaled(quality, "rms_relative_error", 100.0, "%.1f"),
          scaled(quality, "max_relative_error", 100.0, "%.1f")};
}

const Row kQualityHeaders = {"samples", "rms %", "max %"};

Row with_quality(Row cells, const Json& fit) {
  for (std::string& cell : quality_cells(fit)) cells.push_back(std::move(cell));
  return cells;
}

Row with_quality_headers(Row headers) {
  headers.insert(headers.end(), kQualityHeaders.begin(), kQualityHeaders.end());
  return headers;
}

std::string format_name(const Json& fit, const FormatNames& names) {
  const auto id = number(fit, "format");
  if (!id) return kDash;
  const auto found = names.find(static_cast<int>(*id));
  return found != names.end() ? found->second : "format " + format("%.0f", *id);
}

std::string text(const Json& fit, const char* key) {
  return fit.contains(key) && fit[key].is_string() ? fit[key].get<std::string>() : kDash;
}

Row kernel_variant(const Json& fit) {
  const Json variant = fit.contains("variant") ? fit["variant"] : Json::object();
  return {integer(variant, "block_size"), integer(variant, "threads_per_row")};
}

// One family's table: its headers and how a fit becomes a row.
struct FamilyLayout {
  const char* family;
  const char* what;  // the heading's description
  Row headers;
  std::function<Row(const Json& fit, const FormatNames&)> row;
};

std::vector<FamilyLayout> layouts() {
  return {
      {"csr_vector", "CSR vector kernels; ms_vs_row_length: the linear part above the threshold",
       with_quality_headers(
           {"block", "lanes", "curve", "intercept µs", "slope µs/x", "threshold x", "banded ρ"}),
       [](const Json& fit, const FormatNames&) {
         // The piecewise fit's coefficients are those of its linear part ("above").
         const Json& line = fit.contains("above") ? fit["above"] : fit;
         Row cells = kernel_variant(fit);
         cells.insert(cells.end(),
                      {text(fit, "curve"), scaled(line, "intercept", 1e3, "%.2f"),
                       scaled(line, "slope", 1e3), scaled(fit, "threshold_x", 1.0, "%g"),
                       ratio_range(fit, "banded_ratio")});
         return with_quality(cells, fit);
       }},
      {"ell", "ELL kernels; ms over a (width, rows) grid",
       with_quality_headers({"block", "lanes", "widths", "rows", "banded ρ"}),
       [](const Json& fit, const FormatNames&) {
         Row cells = kernel_variant(fit);
         cells.insert(cells.end(), {axis(fit, "widths"), axis(fit, "rows"),
                                    ratio_range(fit, "banded_ratio_vs_width_rows")});
         return with_quality(cells, fit);
       }},
      {"coo", "COO kernels; ms against non-zeros",
       with_quality_headers(
           {"block", "lanes", "entries/thread", "intercept µs", "ns/nnz", "banded ρ"}),
       [](const Json& fit, const FormatNames&) {
         Row cells = kernel_variant(fit);
         const Json variant = fit.contains("variant") ? fit["variant"] : Json::object();
         cells.insert(cells.end(), {integer(variant, "entries_per_thread"),
                                    scaled(fit, "intercept", 1e3, "%.2f"),
                                    scaled(fit, "slope", 1e6), ratio_range(fit, "banded_ratio")});
         return with_quality(cells, fit);
       }},
      {"bytes", "every format without its own model; ms against bytes moved",
       with_quality_headers({"intercept µs", "GB/s", "L2 share for x", "banded ρ"}),
       [](const Json& fit, const FormatNames&) {
         // bandwidth_bytes_per_ms * 1e3 / 1e9 = GB/s
         return with_quality(
             {scaled(fit, "intercept", 1e3, "%.2f"),
              scaled(fit, "bandwidth_bytes_per_ms", 1e-6, "%.0f"),
              scaled(fit, "l2_share_for_x", 1.0, "%.2f"), ratio_range(fit, "banded_ratio")},
             fit);
       }},
      {"format_bytes", "a bytes fit per format and parameters",
       with_quality_headers({"format", "params", "intercept µs", "GB/s", "floor µs",
                             "long-row step ns", "banded ρ"}),
       [](const Json& fit, const FormatNames& names) {
         return with_quality(
             {format_name(fit, names), text(fit, "params"), scaled(fit, "intercept", 1e3, "%.2f"),
              scaled(fit, "bandwidth_bytes_per_ms", 1e-6, "%.0f"),
              scaled(fit, "floor_ms", 1e3, "%.2f"), scaled(fit, "long_row_step_ms", 1e6),
              ratio_range(fit, "banded_ratio")},
             fit);
       }},
      {"cache_resident", "κ = measured / predicted over a (row length, rows) grid, in L2",
       with_quality_headers({"format", "params", "block", "lanes", "κ", "row lengths", "rows",
                             "banded ρ", "footprint MiB"}),
       [](const Json& fit, const FormatNames& names) {
         // COO's variants differ by entries per thread, not by parameters.
         std::string params = text(fit, "params");
         if (params == kDash && number(fit, "entries_per_thread").value_or(0.0) > 0.0)
           params = "entries_per_thread=" + integer(fit, "entries_per_thread");
         return with_quality(
             {format_name(fit, names), params, integer(fit, "block_size", true),
              integer(fit, "threads_per_row", true), exp_range(fit, "log_ms"), axis(fit, "widths"),
              axis(fit, "rows"), ratio_range(fit, "banded_ratio_vs_length_rows"),
              scaled(fit, "largest_footprint_bytes", 1.0 / (1 << 20), "%.1f")},
             fit);
       }},
  };
}

// A family this build does not know: what every fit carries.
FamilyLayout generic_layout() {
  return {"", "", with_quality_headers({"curve", "kind"}), [](const Json& fit, const FormatNames&) {
            return with_quality({text(fit, "curve"), text(fit, "kind")}, fit);
          }};
}

std::string scalar_text(const Json& value) {
  if (value.is_number_float()) return format("%.4g", value.get<double>());
  return value.dump();
}

}  // namespace

std::string model_tables(const Json& summary, const FormatNames& format_names) {
  std::ostringstream out;
  out << text(summary, "precision") << " models (model version "
      << integer(summary, "model_version") << ", " << text(summary, "device_signature") << ")\n";

  const Json fits =
      summary.contains("fits") && summary["fits"].is_array() ? summary["fits"] : Json::array();
  std::vector<std::string> order;
  for (const FamilyLayout& layout : layouts()) order.push_back(layout.family);
  for (const Json& fit : fits) {
    const std::string family = text(fit, "family");
    if (std::find(order.begin(), order.end(), family) == order.end()) order.push_back(family);
  }

  const std::vector<FamilyLayout> known = layouts();
  for (const std::string& family : order) {
    const auto found = std::find_if(known.begin(), known.end(),
                                    [&](const FamilyLayout& l) { return family == l.family; });
    const FamilyLayout layout = found != known.end() ? *found : generic_layout();
    Table table{layout.headers, {}};
    for (const Json& fit : fits)
      if (text(fit, "family") == family) table.rows.push_back(layout.row(fit, format_names));
    if (table.rows.empty()) continue;
    out << "\n  " << family << " (" << table.rows.size() << " fit"
        << (table.rows.size() == 1 ? "" : "s") << (*layout.what ? "; " : "") << layout.what
        << ")\n";
    print_table(out, table);
  }

  for (const char* extra : {"blocked_ell", "cpu_gpu"}) {
    if (!summary.contains(extra) || !summary[extra].is_object()) continue;
    out << "\n  " << extra << ":";
    for (const auto& [key, value] : summary[extra].items())
      out << " " << key << "=" << scalar_text(value);
    out << "\n";
  }
  return out.str();
}

}  // namespace spmvd
