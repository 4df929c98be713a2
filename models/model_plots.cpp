#include "models/model_plots.hpp"

#include "models/svg_plot.hpp"

namespace spmvd {
namespace {

std::string variant_name(const CalibratedKernel& kernel) {
  std::string name;
  if (kernel.threads_per_row > 0) name += "_t" + std::to_string(kernel.threads_per_row);
  if (kernel.resources.threads_per_block > 0)
    name += "_b" + std::to_string(kernel.resources.threads_per_block);
  return name;
}

std::string variant_title(const CalibratedKernel& kernel) {
  std::string title;
  if (kernel.threads_per_row > 0)
    title += ", " + std::to_string(kernel.threads_per_row) + " lanes/row";
  if (kernel.resources.threads_per_block > 0)
    title += ", block " + std::to_string(kernel.resources.threads_per_block);
  if (kernel.resources.registers_per_thread > 0)
    title += ", " + std::to_string(kernel.resources.registers_per_thread) + " regs";
  return title;
}

}  // namespace

std::vector<NamedSvg> model_set_plots(const ModelSet& set) {
  const std::string prefix = std::string(to_string(set.precision)) + "_";
  const std::string device = " (" + std::string(to_string(set.precision)) + ")";
  std::vector<NamedSvg> out;
  for (const CsrVectorCalibration& c : set.csr_vector) {
    if (c.samples.empty()) continue;
    const PiecewiseFit fit = c.time_vs_row_length;
    out.push_back({prefix + "csr_vector" + variant_name(c.kernel) + ".svg",
                   plot_fit_svg(c.samples, [fit](double x) { return fit(x); },
                                {.title = "CSR vector" + variant_title(c.kernel) + device +
                                          ": conic below c = " +
                                          std::to_string(static_cast<long long>(fit.threshold_x)) +
                                          ", line above (paper 004 Fig. 3)",
                                 .x_label = "non-zeros per row c",
                                 .y_label = "ms per sample",
                                 .log_x = true,
                                 .log_y = true})});
  }
  for (const EllCalibration& c : set.ell) {
    out.push_back({prefix + "ell" + variant_name(c.kernel) + ".svg",
                   plot_log_grid_svg(c.time_vs_width_rows,
                                     {.title = "ELL" + variant_title(c.kernel) + device +
                                               ": log grid of width x rows (paper 004 Fig. 5)",
                                      .x_label = "width (entries per row)",
                                      .y_label = "ms"})});
  }
  for (const CooCalibration& c : set.coo) {
    if (c.samples.empty()) continue;
    const LinearFit fit = c.time_vs_nnz;
    out.push_back({prefix + "coo" + variant_name(c.kernel) + ".svg",
                   plot_fit_svg(c.samples, [fit](double x) { return fit(x); },
                                {.title = "COO" + variant_title(c.kernel) + device +
                                          ": linear in non-zeros (paper 004 Fig. 6)",
                                 .x_label = "non-zeros",
                                 .y_label = "ms",
                                 .log_x = true,
                                 .log_y = true})});
  }
  if (set.bytes && !set.bytes->samples.empty()) {
    const LinearFit fit = set.bytes->time_vs_bytes;
    out.push_back(
        {prefix + "bytes.svg",
         plot_fit_svg(set.bytes->samples, [fit](double x) { return fit(x); },
                      {.title = "bytes model" + device + ": launch overhead + bytes / bandwidth",
                       .x_label = "bytes moved",
                       .y_label = "ms",
                       .log_x = true,
                       .log_y = true})});
  }
  return out;
}

}  // namespace spmvd
