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
