#include "models/composed_launch_floors.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

#include "core/field_set.hpp"
#include "models/record_presentation.hpp"

namespace spmvd {

void check_record(const ComposedLaunchFloor& v) {
  if (!(v.floor_ms > 0.0) || !std::isfinite(v.floor_ms))
    throw std::invalid_argument("launch floor " + std::to_string(v.floor_ms) +
                                " ms of format " + std::to_string(v.format.value) +
                                " is not a positive time");
}

std::optional<double> composed_launch_floor_ms(std::span<const ComposedLaunchFloor> floors,
                                               const Candidate& candidate) noexcept {
  const ComposedLaunchFloor* nearest = nullptr;
  std::size_t nearest_shared = 0;
  for (const ComposedLaunchFloor& floor : floors) {
    if (floor.format != candidate.format) continue;
    if (floor.params == candidate.params) return floor.floor_ms;
    const std::size_t shared = shared_field_count(floor.params, candidate.params);
    if (nearest == nullptr || shared > nearest_shared) {
      nearest = &floor;
      nearest_shared = shared;
    }
  }
  if (nearest == nullptr) return std::nullopt;
  return nearest->floor_ms;
}

FamilyTable composed_launch_floors_table(std::span<const ComposedLaunchFloor> floors) {
  FamilyTable table{.name = "composed_floors",
                    .title = "per composed format sharing one launch, its time on the tiny sample",
                    .headers = {"format", "params", "floor µs"}};
  for (const ComposedLaunchFloor& floor : floors)
    table.rows.push_back({format_name_cell(floor.format), to_string(floor.params),
                          number_cell(1e3 * floor.floor_ms, "%.2f")});
  return table;
}

}  // namespace spmvd
