#pragma once
// The ell family's record in a ModelSet: one calibration per block size, as the ell stage fits
// them (ell_calibration.hpp). The hyb family reads it too (HYB's ELL part).

#include <nlohmann/json.hpp>
#include <string_view>
#include <tuple>
#include <vector>

#include "core/field_set.hpp"
#include "core/precision.hpp"
#include "models/families/ell/ell_model.hpp"
#include "models/family_table.hpp"
#include "models/svg_plot.hpp"

namespace spmvd {

struct EllRecord {
  static constexpr std::string_view kFamily = "ell";
  std::vector<EllCalibration> variants;
  static constexpr auto kFields = std::tuple{declare_field("variants", &EllRecord::variants)};
  friend bool operator==(const EllRecord&, const EllRecord&) = default;
};

// Per variant one row: the grid's axes and quality, and its banded ratio as a table.
void add_to_summary(const EllRecord& record, nlohmann::json& summary);
// One table, per variant one row: the grid's axes, the range of its banded ratio, its quality.
std::vector<FamilyTable> tables_of(const EllRecord& record);
// Per variant its grid (Fig. 5).
std::vector<NamedSvg> plots_of(const EllRecord& record, Precision precision);

}  // namespace spmvd
