#include "models/record_presentation.hpp"

#include <cmath>
#include <string>
#include <utility>

namespace spmvd {

nlohmann::json kernel_variant_json(const CalibratedKernel& kernel) {
  return {{"block_size", kernel.resources.threads_per_block},
          {"threads_per_row", kernel.threads_per_row},
          {"registers_per_thread", kernel.resources.registers_per_thread}};
}

void add_fit_row(nlohmann::json& summary, const char* family, const nlohmann::json& variant,
                 const char* curve, const char* kind, nlohmann::json fit) {
  fit["family"] = family;
  fit["curve"] = curve;
  fit["kind"] = kind;
  if (!variant.is_null()) fit["variant"] = variant;
  if (!summary.contains("fits")) summary["fits"] = nlohmann::json::array();
  summary["fits"].push_back(std::move(fit));
}

nlohmann::json ratio_table(const LogGridFit& grid, const char* axis) {
  nlohmann::json table = nlohmann::json::array();
  for (std::size_t r = 0; r < grid.rows.size(); ++r)
    for (std::size_t w = 0; w < grid.widths.size(); ++w)
      table.push_back({{axis, grid.widths[w]},
                       {"rows", grid.rows[r]},
                       {"ratio", std::exp(grid.log_ms[r * grid.widths.size() + w])}});
  return table;
}

std::string kernel_variant_file_suffix(const CalibratedKernel& kernel) {
  std::string name;
  if (kernel.threads_per_row > 0) name += "_t" + std::to_string(kernel.threads_per_row);
  if (kernel.resources.threads_per_block > 0)
    name += "_b" + std::to_string(kernel.resources.threads_per_block);
  return name;
}

std::string kernel_variant_title(const CalibratedKernel& kernel) {
  std::string title;
  if (kernel.threads_per_row > 0)
    title += ", " + std::to_string(kernel.threads_per_row) + " lanes/row";
  if (kernel.resources.threads_per_block > 0)
    title += ", block " + std::to_string(kernel.resources.threads_per_block);
  if (kernel.resources.registers_per_thread > 0)
    title += ", " + std::to_string(kernel.resources.registers_per_thread) + " regs";
  return title;
}

}  // namespace spmvd
