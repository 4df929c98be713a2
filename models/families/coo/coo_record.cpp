#include "models/families/coo/coo_record.hpp"

#include <string>

#include "models/fit_json.hpp"
#include "models/record_presentation.hpp"

namespace spmvd {

void add_to_summary(const CooRecord& record, nlohmann::json& summary) {
  for (const CooCalibration& c : record.variants) {
    nlohmann::json fit = c.time_vs_nnz;
    fit["banded_ratio"] = c.banded_ratio;
    nlohmann::json variant = kernel_variant_json(c.kernel);
    variant["entries_per_thread"] = c.entries_per_thread;  // what tells COO's variants apart
    add_fit_row(summary, "coo", variant, "ms_vs_nnz", "linear", std::move(fit));
  }
}

std::vector<FamilyTable> tables_of(const CooRecord& record) {
  FamilyTable table{.name = std::string(CooRecord::kFamily),
                    .title = "COO kernels; ms against non-zeros",
                    .headers = with_quality_headers({"block", "lanes", "entries/thread",
                                                     "intercept µs", "ns/nnz", "banded ρ"})};
  for (const CooCalibration& c : record.variants) {
    TableRow cells = kernel_variant_cells(c.kernel);
    cells.insert(
        cells.end(),
        {count_cell(c.entries_per_thread), number_cell(1e3 * c.time_vs_nnz.intercept, "%.2f"),
         number_cell(1e6 * c.time_vs_nnz.slope), ratio_range_cell(c.banded_ratio)});
    table.rows.push_back(with_quality_cells(std::move(cells), c.time_vs_nnz.quality));
  }
  return {std::move(table)};
}

std::vector<NamedSvg> plots_of(const CooRecord& record, Precision precision) {
  const std::string prefix = std::string(to_string(precision)) + "_";
  const std::string device = " (" + std::string(to_string(precision)) + ")";
  std::vector<NamedSvg> out;
  for (const CooCalibration& c : record.variants) {
    if (c.samples.empty()) continue;
    const LinearFit fit = c.time_vs_nnz;
    out.push_back({prefix + "coo" + kernel_variant_file_suffix(c.kernel) + ".svg",
                   plot_fit_svg(c.samples, [fit](double x) { return fit(x); },
                                {.title = "COO" + kernel_variant_title(c.kernel) + device +
                                          ": linear in non-zeros (paper 004 Fig. 6)",
                                 .x_label = "non-zeros",
                                 .y_label = "ms",
                                 .log_x = true,
                                 .log_y = true})});
  }
  return out;
}

}  // namespace spmvd
