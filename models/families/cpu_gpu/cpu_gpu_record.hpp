#pragma once
// The cpu_gpu family's record in a ModelSet: paper 003's coefficients (CpuGpuTimeCoefficients,
// cpu_gpu_time_model.hpp), fitted after the stages (cpu_gpu_fit.hpp). No format names the
// family: the host parts of composed formats are predicted with it
// (models/part_time_predictor.hpp).

#include <nlohmann/json.hpp>
#include <vector>

#include "core/precision.hpp"
#include "models/families/cpu_gpu/cpu_gpu_time_model.hpp"
#include "models/family_table.hpp"
#include "models/svg_plot.hpp"

namespace spmvd {

// No fit rows: the coefficients as summary["cpu_gpu"].
void add_to_summary(const CpuGpuTimeCoefficients& record, nlohmann::json& summary);
// One table of one row: the coefficients of Eqs. 6-8 (nc, fc, C, F), the host's banded ratio
// (fc's locality term), the host copies' bandwidth (GB/s) and latency (µs), the round trip,
// a row's cost and the range of the x-width ratios.
std::vector<FamilyTable> tables_of(const CpuGpuTimeCoefficients& record);
// None: coefficients without samples.
std::vector<NamedSvg> plots_of(const CpuGpuTimeCoefficients& record, Precision precision);

}  // namespace spmvd
