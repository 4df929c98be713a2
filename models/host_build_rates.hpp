#pragma once
// What building each format from a matrix's CSR took on the calibrated machine, per nonzero:
// the tuner's estimate of a candidate's build (tuner.hpp RegistryBuildCostEstimate), which
// decides whether the expected multiplies repay a host-built format and what a tuning spends.
// Host algorithms differ by more than an order of magnitude (H100 host, 2026-11-24 live runs:
// BCE 13.5 ns a nonzero, BRO-ELL 48, EHYB's METIS 351), so one rate for all of them let auto
// tunings overrun their budget 1.6x (docs/TUNER.md). Timed by the calibration driver on the
// largest sample each format is built on (models/calibration.cpp), the composed formats by
// their finishing fit (models/calibration/composed_formats_fit.hpp). A rate a device byte too:
// a layout padded far beyond its nonzeros costs its bytes, not its nonzeros (BCE's blocks
// padded to their longest row: 7-700 ns a nonzero, 0.2-1.0 ns a device byte over the suite's
// BCE builds on the H100 host, 2026-11-25), and the estimate is the larger of the two.

#include <cstdint>
#include <span>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/format_id.hpp"
#include "models/family_table.hpp"

namespace spmvd {

struct HostBuildRate {
  FormatId format;
  double ns_per_nonzero = 0.0;  // > 0: the build's wall time over the sample's nonzeros
  double ns_per_device_byte = 0.0;  // > 0: the same over the bytes the build left on the device
  std::int64_t sample_nonzeros = 0;  // the sample it was timed on
  friend bool operator==(const HostBuildRate&, const HostBuildRate&) = default;
};
void to_json(nlohmann::json& j, const HostBuildRate& v);
void from_json(const nlohmann::json& j, HostBuildRate& v);

// The rates of `format` in `rates`; nullptr where calibration built none of it (formats of
// another device kind).
const HostBuildRate* host_build_rate(std::span<const HostBuildRate> rates, FormatId format);

// A build of `nonzeros` leaving `device_bytes` on the device at `rate`: the larger of the two
// estimates, ms.
double host_build_ms(const HostBuildRate& rate, std::int64_t nonzeros, std::uint64_t device_bytes);

// Keeps the build of the larger sample per format: a build's fixed costs (allocations, a
// launch, METIS's set-up) weigh less there, as on the matrices whose builds need an estimate.
void record_build(std::vector<HostBuildRate>& rates, FormatId format, double build_ms,
                  std::int64_t sample_nonzeros, std::uint64_t device_bytes);

// `spmvctl model show`'s "build_rates" table: per format (by this build's names) its rates and
// the sample it was timed on.
FamilyTable host_build_rates_table(std::span<const HostBuildRate> rates);

}  // namespace spmvd
