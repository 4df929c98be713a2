#include "bench/feature_report.hpp"

#include <algorithm>
#include <iomanip>

#include "core/field_set_json.hpp"

namespace spmvd {

std::vector<RowLengthCount> most_common_lengths(const MatrixFeatures& features, std::size_t top) {
  std::vector<RowLengthCount> sorted = features.distribution;
  std::stable_sort(
      sorted.begin(), sorted.end(),
      [](const RowLengthCount& a, const RowLengthCount& b) { return a.rows > b.rows; });
  if (sorted.size() > top) sorted.resize(top);
  return sorted;
}

nlohmann::json features_to_json(const MatrixFeatures& f, const Fingerprint& fingerprint,
                                std::size_t top) {
  nlohmann::json common = nlohmann::json::array();
  for (const auto& entry : most_common_lengths(f, top))
    common.push_back({{"length", entry.length}, {"rows", entry.rows}});
  nlohmann::json own = nlohmann::json::object();
  for (const auto& [format, fields] : f.format_features)
    own[format] = field_set_to_json(fields, "features of " + format);
  return {
      {"rows", f.rows},
      {"cols", f.cols},
      {"nnz", f.nnz},
      {"row_length",
       {{"min", f.row_length_min},
        {"mean", f.row_length_mean},
        {"max", f.row_length_max},
        {"stddev", f.row_length_stddev}}},
      {"empty_rows", f.empty_rows},
      {"distribution", {{"distinct_lengths", f.distribution.size()}, {"most_common", common}}},
      {"mean_row_span_fraction", f.mean_row_span_fraction},
      {"x_sectors_per_nonzero", f.x_sectors_per_nonzero},
      {"format_features", own},
      {"fingerprint", fingerprint.hex()},
  };
}

void print_features(std::ostream& out, const MatrixFeatures& f, const Fingerprint& fingerprint,
                    std::size_t top) {
  const auto key = [&out](const char* name) -> std::ostream& {
    return out << "  " << std::left << std::setw(22) << name;
  };
  key("rows") << f.rows << "\n";
  key("cols") << f.cols << "\n";
  key("nnz") << f.nnz << "\n";
  key("row length") << "min " << f.row_length_min << "  mean " << std::fixed << std::setprecision(2)
                    << f.row_length_mean << "  max " << f.row_length_max << "  stddev "
                    << f.row_length_stddev << std::defaultfloat << "\n";
  key("empty rows") << f.empty_rows << "\n";
  key("DF") << f.distribution.size() << " distinct lengths; most common:";
  for (const auto& entry : most_common_lengths(f, top))
    out << " " << entry.length << " (" << entry.rows << " rows)";
  out << "\n";
  key("mean row span") << std::setprecision(4) << f.mean_row_span_fraction << std::defaultfloat
                       << " of cols\n";
  key("x sectors") << std::setprecision(4) << f.x_sectors_per_nonzero << std::defaultfloat
                   << " per non-zero (groups of " << kXGatherGroupRows << " rows)\n";
  // What each format's own hook measured (FormatRules::own_features).
  for (const auto& [format, fields] : f.format_features) key(format.c_str()) << fields << "\n";
  key("fingerprint") << fingerprint.hex() << "\n";
}

}  // namespace spmvd
