#include "models/fit_json.hpp"

#include <algorithm>
#include <stdexcept>

#include "core/field_set_json.hpp"

namespace spmvd {

// A sample as [x, y]: the records keep every measured point for plots, so keep them short.
void to_json(nlohmann::json& j, const SamplePoint& v) { j = nlohmann::json::array({v.x, v.y}); }
void from_json(const nlohmann::json& j, SamplePoint& v) {
  if (!j.is_array() || j.size() != 2) throw std::invalid_argument("a sample is [x, y]");
  j.at(0).get_to(v.x);
  j.at(1).get_to(v.y);
}

void to_json(nlohmann::json& j, const FormatId& v) { j = v.value; }
void from_json(const nlohmann::json& j, FormatId& v) { j.get_to(v.value); }

void to_json(nlohmann::json& j, const FieldSet& v) { j = field_set_to_json(v, "model set"); }
void from_json(const nlohmann::json& j, FieldSet& v) {
  v = field_set_from_json(j, "model set", "params");
}

void check_record(const LogGridFit& v) {
  if (v.widths.empty() && v.rows.empty() && v.log_ms.empty()) return;  // no grid: no term
  const auto ascending_positive = [](const std::vector<double>& axis) {
    return !axis.empty() && axis.front() > 0.0 &&
           std::adjacent_find(axis.begin(), axis.end(), std::greater_equal<>()) == axis.end();
  };
  if (!ascending_positive(v.widths) || !ascending_positive(v.rows) ||
      v.log_ms.size() != v.widths.size() * v.rows.size()) {
    throw std::invalid_argument(
        "log_grid: widths and rows must be non-empty, positive and ascending, and log_ms must "
        "have widths x rows entries");
  }
}

}  // namespace spmvd
