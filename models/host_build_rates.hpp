#pragma once
// What building each format from a matrix's CSR took on the calibrated machine, per nonzero:
// the tuner's estimate of a candidate's build (tuner.hpp RegistryBuildCostEstimate), which
// decides whether the expected multiplies repay a host-built format and what a tuning spends.
// Host algorithms differ by more than an order of magnitude (H100 host, 2026-11-24 live runs:
// BCE 13.5 ns a nonzero, BRO-ELL 48, EHYB's METIS 351), so one rate for all of them let auto
// tunings overrun their budget 1.6x (docs/TUNER.md). Timed by the calibration driver on the
// largest sample each format is built on (models/calibration.cpp).

#include <optional>
#include <span>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/format_id.hpp"
#include "models/family_table.hpp"

namespace spmvd {

struct HostBuildRate {
  FormatId format;
  double ns_per_nonzero = 0.0;  // > 0: the build's wall time over the sample's nonzeros
  std::int64_t sample_nonzeros = 0;  // the sample it was timed on
  friend bool operator==(const HostBuildRate&, const HostBuildRate&) = default;
};
void to_json(nlohmann::json& j, const HostBuildRate& v);
void from_json(const nlohmann::json& j, HostBuildRate& v);

// The rate of `format` in `rates`; nullopt where calibration built none of it (composed formats,
// those of another device kind).
std::optional<double> host_build_ns_per_nonzero(std::span<const HostBuildRate> rates,
                                                FormatId format);

// Keeps the build of the larger sample per format: a build's fixed costs (allocations, a
// launch, METIS's set-up) weigh less there, as on the matrices whose builds need an estimate.
void record_build(std::vector<HostBuildRate>& rates, FormatId format, double build_ms,
                  std::int64_t sample_nonzeros);

// `spmvctl model show`'s "build_rates" table: per format (by this build's names) its rate and
// the sample it was timed on.
FamilyTable host_build_rates_table(std::span<const HostBuildRate> rates);

}  // namespace spmvd
