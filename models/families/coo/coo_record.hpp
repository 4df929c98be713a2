#pragma once
// The coo family's record in a ModelSet: one calibration per entries per thread E and block
// size, as the coo stage fits them (coo_calibration.hpp). The hyb family reads it too (HYB's
// COO part), and calibration's paper 003 fit its cpu_coo line (cpu_gpu_fit.hpp).

#include <nlohmann/json.hpp>
#include <string_view>
#include <tuple>
#include <vector>

#include "core/field_set.hpp"
#include "core/precision.hpp"
#include "models/families/coo/coo_model.hpp"
#include "models/family_table.hpp"
#include "models/svg_plot.hpp"

namespace spmvd {

struct CooRecord {
  static constexpr std::string_view kFamily = "coo";
  std::vector<CooCalibration> variants;
  static constexpr auto kFields = std::tuple{declare_field("variants", &CooRecord::variants)};
  friend bool operator==(const CooRecord&, const CooRecord&) = default;
};

// Per variant one row: its line, banded ratio, and E in its variant.
void add_to_summary(const CooRecord& record, nlohmann::json& summary);
// One table, per variant one row: E, the line (µs, ns per non-zero), the banded ratio.
std::vector<FamilyTable> tables_of(const CooRecord& record);
// Per variant with samples, its samples and line (Fig. 6).
std::vector<NamedSvg> plots_of(const CooRecord& record, Precision precision);

}  // namespace spmvd
