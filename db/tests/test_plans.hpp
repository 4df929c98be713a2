#pragma once
// Plans and keys for the db tests, with every field set to a distinct non-default value, so a
// codec or a store that drops or swaps a field fails equality.

#include <cstdint>
#include <string>
#include <vector>

#include "core/field_set.hpp"
#include "core/plan.hpp"
#include "db/plan_key.hpp"

namespace spmvd::test {

inline Plan full_plan(std::uint32_t seed = 1) {
  Plan plan;
  plan.format = FormatId{static_cast<std::uint16_t>(40000 + seed)};
  plan.format_name = "sell \"c\" \xcf\x83 #" + std::to_string(seed);  // quote and UTF-8 sigma
  std::uint32_t next = 100 * seed + 1;
  // Through the field list, so a field added later is covered without editing this helper.
  for_each_field(plan.launch, [&](const char*, auto& field) { field = next++; });
  // A format's parameters as the codec and the store see them: named values of every kind a
  // FieldSet holds (beyond 32 bits, negative, not exactly representable).
  plan.params = FieldSet({{"slice_height", std::int64_t{next++}},
                          {"offset", std::int64_t{-3} - seed},
                          {"ratio", 1.0 / 3.0 + seed},
                          {"boundaries", std::vector<std::int64_t>{0, 7, (1LL << 40) + seed}},
                          {"thresholds", std::vector<double>{0.1 * seed, 1e-300, 2.0}}});
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
  // Two formats' own features, shaped as cuda_sell's and cusparse_bsr's (the codec does not know
  // them: any named values round-trip).
  plan.features.format_features = {
      {"cuda_sell", FieldSet({{"padded_lengths_32", std::vector<std::int64_t>{0, 5}},
                              {"padded_rows_32", std::vector<std::int64_t>{2, (1LL << 40) + seed}},
                              {"sort_windows", std::vector<std::int64_t>{256, (1LL << 40) + seed}},
                              {"sorted_sectors_per_nonzero", std::vector<double>{0.25, 1.0}}})},
      {"cusparse_bsr",
       FieldSet({{"block_dims", std::vector<std::int64_t>{2, 4}},
                 {"blocks", std::vector<std::int64_t>{1'000'000'000'000LL + seed, 3}}})}};
  plan.features.formats_left_out = {"cuda_bro_ell", "cuda_ehyb"};
  plan.tuning = TuningRecord{
      .mode = TuneMode::verify_top_k,
      .k = 3 + seed,
      .expected_multiplies = (1ULL << 40) + seed,
      .budget_ms = 0.7 * seed,
      .cost = {.features_ms = 0.1 + seed,
               .ranking_ms = 0.02,
               .builds_ms = 1.0 / 7.0,
               .measurements_ms = 3.5,
               .total_ms = 0.1 + seed + 0.02 + 1.0 / 7.0 + 3.5}};
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
