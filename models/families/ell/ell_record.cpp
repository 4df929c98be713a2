#include "models/families/ell/ell_record.hpp"

#include <string>

#include "models/fit_json.hpp"
#include "models/record_presentation.hpp"

namespace spmvd {

void add_to_summary(const EllRecord& record, nlohmann::json& summary) {
  for (const EllCalibration& c : record.variants) {
    nlohmann::json grid = c.time_vs_width_rows;
    grid.erase("log_ms");  // the table is for plots (svg_plot), not for reading
    if (!c.banded_ratio_vs_width_rows.log_ms.empty())
      grid["banded_ratio_vs_width_rows"] = ratio_table(c.banded_ratio_vs_width_rows, "width");
    add_fit_row(summary, "ell", kernel_variant_json(c.kernel), "ms_vs_width_rows", "log_grid",
                std::move(grid));
  }
}

std::vector<FamilyTable> tables_of(const EllRecord& record) {
  FamilyTable table{
      .name = std::string(EllRecord::kFamily),
      .title = "ELL kernels; ms over a (width, rows) grid",
      .headers = with_quality_headers({"block", "lanes", "widths", "rows", "banded ρ"})};
  for (const EllCalibration& c : record.variants) {
    const LogGridFit& grid = c.time_vs_width_rows;
    TableRow cells = kernel_variant_cells(c.kernel);
    cells.insert(cells.end(), {axis_cell(grid.widths), axis_cell(grid.rows),
                               grid_ratio_range_cell(c.banded_ratio_vs_width_rows)});
    table.rows.push_back(with_quality_cells(std::move(cells), grid.quality));
  }
  return {std::move(table)};
}

std::vector<NamedSvg> plots_of(const EllRecord& record, Precision precision) {
  const std::string prefix = std::string(to_string(precision)) + "_";
  const std::string device = " (" + std::string(to_string(precision)) + ")";
  std::vector<NamedSvg> out;
  for (const EllCalibration& c : record.variants) {
    out.push_back({prefix + "ell" + kernel_variant_file_suffix(c.kernel) + ".svg",
                   plot_log_grid_svg(c.time_vs_width_rows,
                                     {.title = "ELL" + kernel_variant_title(c.kernel) + device +
                                               ": log grid of width x rows (paper 004 Fig. 5)",
                                      .x_label = "width (entries per row)",
                                      .y_label = "ms"})});
  }
  return out;
}

}  // namespace spmvd
