#pragma once
// What one launch of a composed format takes with next to no work, measured per distinct
// parameters of its candidates on the latency stage's tiny sample: the fixed cost of the launch
// its parts share (kernels/format_parts.hpp). The set's launch floor is a CSR-vector launch's;
// BCE's one launch first reads its tile and block tables, then each row's length, and writes y
// through rowNo, a chain of dependent loads that its parts (an ELL or CSR-vector run alone) do
// not have: on an H100 (fp64 and fp32, 2026-11-25) BCE took 5.1-6.4 us on matrices of 1-3
// thousand rows where the launch floor is 3.7-3.9 us, and was predicted 1.3-1.5x fast there
// (docs/MODELS.md "Composed formats and the host part").

#include <optional>
#include <span>
#include <tuple>

#include "core/format_id.hpp"
#include "core/format_params.hpp"
#include "kernels/candidate.hpp"
#include "models/family_table.hpp"
#include "models/fit_json.hpp"

namespace spmvd {

struct ComposedLaunchFloor {
  FormatId format;
  FormatParams params{};  // the candidate's parameters on the tiny sample
  double floor_ms = 0.0;  // > 0: the median time of a multiply there
  static constexpr auto kFields =
      std::tuple{declare_field("format", &ComposedLaunchFloor::format),
                 declare_field("params", &ComposedLaunchFloor::params),
                 declare_field("floor_ms", &ComposedLaunchFloor::floor_ms)};
  friend bool operator==(const ComposedLaunchFloor&, const ComposedLaunchFloor&) = default;
};

// After reading: floor_ms is positive and finite; throws std::invalid_argument naming the
// format otherwise.
void check_record(const ComposedLaunchFloor& v);

// The floor of the candidate's format with its parameters, else the one sharing most of them
// (BCE's boundaries follow each matrix; its variant decides the kernel); nullopt where the set
// holds none of its format.
std::optional<double> composed_launch_floor_ms(std::span<const ComposedLaunchFloor> floors,
                                               const Candidate& candidate) noexcept;

// `spmvctl model show`'s "composed_floors" table: per format and parameters, its floor in µs.
FamilyTable composed_launch_floors_table(std::span<const ComposedLaunchFloor> floors);

}  // namespace spmvd
