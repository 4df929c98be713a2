#include "models/host_build_rates.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "models/fit_json.hpp"
#include "models/record_presentation.hpp"

namespace spmvd {

void to_json(nlohmann::json& j, const HostBuildRate& v) {
  j = {{"format", v.format},
       {"ns_per_nonzero", v.ns_per_nonzero},
       {"sample_nonzeros", v.sample_nonzeros}};
}

void from_json(const nlohmann::json& j, HostBuildRate& v) {
  j.at("format").get_to(v.format);
  j.at("ns_per_nonzero").get_to(v.ns_per_nonzero);
  j.at("sample_nonzeros").get_to(v.sample_nonzeros);
  if (!(v.ns_per_nonzero > 0.0) || !std::isfinite(v.ns_per_nonzero) || v.sample_nonzeros <= 0)
    throw std::invalid_argument("build rate " + std::to_string(v.ns_per_nonzero) +
                                " ns a nonzero of format " + std::to_string(v.format.value) +
                                " on " + std::to_string(v.sample_nonzeros) +
                                " nonzeros is not a positive rate on a non-empty sample");
}

std::optional<double> host_build_ns_per_nonzero(std::span<const HostBuildRate> rates,
                                                FormatId format) {
  for (const HostBuildRate& r : rates)
    if (r.format == format) return r.ns_per_nonzero;
  return std::nullopt;
}

void record_build(std::vector<HostBuildRate>& rates, FormatId format, double build_ms,
                  std::int64_t sample_nonzeros) {
  if (sample_nonzeros <= 0 || !(build_ms > 0.0)) return;
  const HostBuildRate rate{.format = format,
                           .ns_per_nonzero = build_ms * 1e6 / static_cast<double>(sample_nonzeros),
                           .sample_nonzeros = sample_nonzeros};
  const auto it = std::find_if(rates.begin(), rates.end(),
                               [&](const HostBuildRate& r) { return r.format == format; });
  if (it == rates.end())
    rates.push_back(rate);
  else if (sample_nonzeros > it->sample_nonzeros)
    *it = rate;
}

FamilyTable host_build_rates_table(std::span<const HostBuildRate> rates) {
  FamilyTable table{.name = "build_rates",
                    .title = "per format built on the host, its build's time a nonzero",
                    .headers = {"format", "ns / nonzero", "sample nonzeros"}};
  for (const HostBuildRate& r : rates)
    table.rows.push_back({format_name_cell(r.format), number_cell(r.ns_per_nonzero, "%.1f"),
                          count_cell(r.sample_nonzeros)});
  return table;
}

}  // namespace spmvd
