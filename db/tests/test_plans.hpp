#pragma once
// Plans and keys for the db tests, with every field set to a distinct non-default value, so a
// codec or a store that drops or swaps a field fails equality.

#include <cstdint>
#include <string>

#include "core/plan.hpp"
#include "db/plan_key.hpp"

namespace spmvd::test {

inline Plan full_plan(std::uint32_t seed = 1) {
  Plan plan;
  plan.format = FormatId{static_cast<std::uint16_t>(40000 + seed)};
  plan.format_name = "sell \"c\" \xcf\x83 #" + std::to_string(seed);  // quote and UTF-8 sigma
  std::uint32_t next = 100 * seed + 1;
  // Through the field lists, so a field added later is covered without editing this helper.
  for_each_field(plan.params, [&](const char*, auto& field) { field = next++; });
  for_each_field(plan.launch, [&](const char*, auto& field) { field = next++; });
  plan.precision = Precision::fp32;
  plan.predicted_ms = 0.1 * seed;  // not exactly representable: checks shortest round trip
  plan.measured_ms = 1.0 / 3.0 + seed;
  plan.candidates_measured = 17 + seed;
  plan.tuner_version = 3;
  plan.features.rows = 5'000'000'000LL;  // beyond 32 bits
  plan.features.cols = 4'999'999'999LL;
  plan.features.nnz = 123'456'789'012LL;
  plan.features.row_length_min = 1;
  plan.features.row_length_max = (1LL << 40) + seed;
  plan.features.row_length_mean = 24.691357802400001;
  plan.features.row_length_stddev = 1e-300;
  plan.features.empty_rows = 7;
  plan.features.distribution = {{1, 3}, {5, 2}, {(1LL << 40) + seed, 1}};
  plan.features.mean_row_span_fraction = 2.0e-10;
  plan.features.x_sectors_per_nonzero = 0.125;
  plan.features.group_padded = {{.group_rows = 64, .distribution = {{0, 2}, {5, 4}}},
                                {.group_rows = 32, .distribution = {{(1LL << 40) + seed, 6}}}};
  plan.features.block_counts = {{2, 1'000'000'000'000LL + seed}, {4, 3}};
  plan.features.sorted_gathers = {{.sort_window = 256, .x_sectors_per_nonzero = 0.25},
                                  {.sort_window = (1LL << 40) + seed, .x_sectors_per_nonzero = 1.0}};
  return plan;
}

inline PlanKey key_of(std::uint64_t fingerprint_low, const std::string& device = "gpu|test|cc9.0",
                      Precision precision = Precision::fp32, std::uint32_t tuner_version = 3,
                      std::uint32_t model_version = 12) {
  return PlanKey{Fingerprint{.high = 0xfedcba9876543210ULL, .low = fingerprint_low}, device,
                 precision, tuner_version, model_version};
}

// A plan that may be stored under key (precision and tuner version agree with it).
inline Plan plan_for(const PlanKey& key, std::uint32_t seed = 1) {
  Plan plan = full_plan(seed);
  plan.precision = key.precision;
  plan.tuner_version = key.tuner_version;
  return plan;
}

}  // namespace spmvd::test
