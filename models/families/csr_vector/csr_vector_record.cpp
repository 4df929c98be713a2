#include "models/families/csr_vector/csr_vector_record.hpp"

#include <algorithm>
#include <string>

#include "models/fit_json.hpp"
#include "models/record_presentation.hpp"

namespace spmvd {

void check_record(CsrVectorCalibration& v) {
  std::stable_sort(v.samples.begin(), v.samples.end(),
                   [](const SamplePoint& l, const SamplePoint& r) { return l.x < r.x; });
}

void add_to_summary(const CsrVectorRecord& record, nlohmann::json& summary) {
  for (const CsrVectorCalibration& c : record.variants) {
    nlohmann::json fig3 = c.time_vs_row_length;
    fig3["banded_ratio"] = c.banded_ratio;  // models/locality.hpp
    add_fit_row(summary, "csr_vector", kernel_variant_json(c.kernel), "ms_vs_row_length",
                "piecewise_conic_linear", std::move(fig3));
    add_fit_row(summary, "csr_vector", kernel_variant_json(c.kernel), "ms_vs_sample_nnz", "linear",
                c.time_vs_sample_nnz);
  }
}

std::vector<FamilyTable> tables_of(const CsrVectorRecord& record) {
  FamilyTable table{
      .name = std::string(CsrVectorRecord::kFamily),
      .title = "CSR vector kernels; ms_vs_row_length: the linear part above the threshold",
      .headers = with_quality_headers(
          {"block", "lanes", "curve", "intercept µs", "slope µs/x", "threshold x", "banded ρ"})};
  const auto line_cells = [](const CalibratedKernel& kernel, const char* curve,
                             const LinearFit& line) {
    TableRow cells = kernel_variant_cells(kernel);
    cells.insert(cells.end(),
                 {curve, number_cell(1e3 * line.intercept, "%.2f"), number_cell(1e3 * line.slope)});
    return cells;
  };
  for (const CsrVectorCalibration& c : record.variants) {
    const PiecewiseFit& fig3 = c.time_vs_row_length;
    TableRow piecewise = line_cells(c.kernel, "ms_vs_row_length", fig3.above);
    piecewise.insert(piecewise.end(),
                     {number_cell(fig3.threshold_x, "%g"), ratio_range_cell(c.banded_ratio)});
    table.rows.push_back(with_quality_cells(std::move(piecewise), fig3.quality));
    TableRow fig4 = line_cells(c.kernel, "ms_vs_sample_nnz", c.time_vs_sample_nnz);
    fig4.insert(fig4.end(), {kNoValue, kNoValue});
    table.rows.push_back(with_quality_cells(std::move(fig4), c.time_vs_sample_nnz.quality));
  }
  return {std::move(table)};
}

std::vector<NamedSvg> plots_of(const CsrVectorRecord& record, Precision precision) {
  const std::string prefix = std::string(to_string(precision)) + "_";
  const std::string device = " (" + std::string(to_string(precision)) + ")";
  std::vector<NamedSvg> out;
  for (const CsrVectorCalibration& c : record.variants) {
    if (c.samples.empty()) continue;
    const PiecewiseFit fit = c.time_vs_row_length;
    out.push_back({prefix + "csr_vector" + kernel_variant_file_suffix(c.kernel) + ".svg",
                   plot_fit_svg(c.samples, [fit](double x) { return fit(x); },
                                {.title = "CSR vector" + kernel_variant_title(c.kernel) + device +
                                          ": conic below c = " +
                                          std::to_string(static_cast<long long>(fit.threshold_x)) +
                                          ", line above (paper 004 Fig. 3)",
                                 .x_label = "non-zeros per row c",
                                 .y_label = "ms per sample",
                                 .log_x = true,
                                 .log_y = true})});
  }
  return out;
}

}  // namespace spmvd
