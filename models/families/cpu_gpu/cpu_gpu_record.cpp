#include "models/families/cpu_gpu/cpu_gpu_record.hpp"

#include "models/fit_json.hpp"
#include "models/record_presentation.hpp"

namespace spmvd {

void add_to_summary(const CpuGpuTimeCoefficients& record, nlohmann::json& summary) {
  summary[std::string(CpuGpuTimeCoefficients::kFamily)] = record;
}

std::vector<FamilyTable> tables_of(const CpuGpuTimeCoefficients& record) {
  return {
      {.name = std::string(CpuGpuTimeCoefficients::kFamily),
       .title = "paper 003's coefficients of the CPU-GPU split (Eqs. 6-8) and host copies",
       .headers = {"cores nc", "ops/ms/core fc", "host banded ρ", "SMs C", "ops/ms/SM F",
                   "host↔device GB/s", "copy latency µs", "host round trip µs", "host wake µs",
                   "host row ns",
                   "host x-width ratio"},
       .rows = {{count_cell(record.cpu_cores), number_cell(record.cpu_operations_per_ms, "%.4g"),
                 number_cell(record.cpu_banded_ratio, "%.2f"),
                 count_cell(record.gpu_streaming_processors),
                 number_cell(record.gpu_operations_per_ms_per_sp, "%.4g"),
                 number_cell(1e-6 * record.host_device_bytes_per_ms, "%.1f"),
                 number_cell(1e3 * record.host_device_copy_latency_ms, "%.2f"),
                 number_cell(1e3 * record.host_round_trip_ms, "%.1f"),
                 number_cell(1e3 * record.host_wake_ms, "%.1f"),
                 number_cell(1e6 * record.cpu_ms_per_row, "%.2f"),
                 ratio_range_cell(record.x_width_ratio)}}}};
}

std::vector<NamedSvg> plots_of(const CpuGpuTimeCoefficients&, Precision) { return {}; }

}  // namespace spmvd
