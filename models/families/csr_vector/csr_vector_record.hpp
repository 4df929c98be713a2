#pragma once
// The csr_vector family's record in a ModelSet: one calibration per variant (lanes per row,
// block size), as the csr_vector stage fits them (csr_vector_calibration.hpp).

#include <nlohmann/json.hpp>
#include <string_view>
#include <tuple>
#include <vector>

#include "core/field_set.hpp"
#include "core/precision.hpp"
#include "models/families/csr_vector/csr_vector_model.hpp"
#include "models/family_table.hpp"
#include "models/svg_plot.hpp"

namespace spmvd {

struct CsrVectorRecord {
  static constexpr std::string_view kFamily = "csr_vector";
  std::vector<CsrVectorCalibration> variants;
  static constexpr auto kFields = std::tuple{declare_field("variants", &CsrVectorRecord::variants)};
  friend bool operator==(const CsrVectorRecord&, const CsrVectorRecord&) = default;
};

// Per variant two rows: Fig. 3's piecewise fit with its banded ratio, Fig. 4's line.
void add_to_summary(const CsrVectorRecord& record, nlohmann::json& summary);
// One table, per variant two rows: Fig. 3's linear part (above the threshold) with the
// threshold and banded ratio, and Fig. 4's line; the quality of the whole fit.
std::vector<FamilyTable> tables_of(const CsrVectorRecord& record);
// Per variant with samples, its samples and Fig. 3's fit.
std::vector<NamedSvg> plots_of(const CsrVectorRecord& record, Precision precision);

}  // namespace spmvd
