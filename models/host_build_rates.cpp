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
       {"ns_per_device_byte", v.ns_per_device_byte},
       {"sample_nonzeros", v.sample_nonzeros}};
}

void from_json(const nlohmann::json& j, HostBuildRate& v) {
  j.at("format").get_to(v.format);
  j.at("ns_per_nonzero").get_to(v.ns_per_nonzero);
  j.at("ns_per_device_byte").get_to(v.ns_per_device_byte);
  j.at("sample_nonzeros").get_to(v.sample_nonzeros);
  const auto positive = [](double rate) { return rate > 0.0 && std::isfinite(rate); };
  if (!positive(v.ns_per_nonzero) || !positive(v.ns_per_device_byte) || v.sample_nonzeros <= 0)
    throw std::invalid_argument("build rate " + std::to_string(v.ns_per_nonzero) +
                                " ns a nonzero, " + std::to_string(v.ns_per_device_byte) +
                                " ns a device byte of format " + std::to_string(v.format.value) +
                                " on " + std::to_string(v.sample_nonzeros) +
                                " nonzeros is not a positive rate on a non-empty sample");
}

const HostBuildRate* host_build_rate(std::span<const HostBuildRate> rates, FormatId format) {
  for (const HostBuildRate& r : rates)
    if (r.format == format) return &r;
  return nullptr;
}

double host_build_ms(const HostBuildRate& rate, std::int64_t nonzeros, std::uint64_t device_bytes) {
  return 1e-6 * std::max(rate.ns_per_nonzero * static_cast<double>(std::max<std::int64_t>(nonzeros, 0)),
                         rate.ns_per_device_byte * static_cast<double>(device_bytes));
}

void record_build(std::vector<HostBuildRate>& rates, FormatId format, double build_ms,
                  std::int64_t sample_nonzeros, std::uint64_t device_bytes) {
  if (sample_nonzeros <= 0 || device_bytes == 0 || !(build_ms > 0.0)) return;
  const HostBuildRate rate{
      .format = format,
      .ns_per_nonzero = build_ms * 1e6 / static_cast<double>(sample_nonzeros),
      .ns_per_device_byte = build_ms * 1e6 / static_cast<double>(device_bytes),
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
                    .headers = {"format", "ns / nonzero", "ns / device byte", "sample nonzeros"}};
  for (const HostBuildRate& r : rates)
    table.rows.push_back({format_name_cell(r.format), number_cell(r.ns_per_nonzero, "%.1f"),
                          number_cell(r.ns_per_device_byte, "%.2f"), count_cell(r.sample_nonzeros)});
  return table;
}

}  // namespace spmvd
