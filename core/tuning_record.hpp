#pragma once
// What a tuning did and what it cost, stored with its Plan (docs/TUNER.md): the mode that ran,
// how many candidates it measured, the budget it had, and where the time went.

#include <cstdint>
#include <optional>
#include <string_view>

namespace spmvd {

// How much measuring a tuning does (docs/TUNER.md "Modes").
enum class TuneMode : std::uint8_t {
  model_only = 1,    // rank, build the top prediction, measure it once, keep it
  verify_top_k = 2,  // measure the best k predicted (k from the budget), keep the fastest
  exhaustive = 3,    // measure every admissible candidate: the oracle, for evaluation
};

std::string_view to_string(TuneMode mode) noexcept;  // "model-only", "verify-top-k", "exhaustive"
std::optional<TuneMode> parse_tune_mode(std::string_view text) noexcept;

// Milliseconds of host wall time per stage of one tuning. total_ms is the sum of the four
// stages (cost accounting adds up); features_ms is the feature pass made at upload.
struct TuningCost {
  double features_ms = 0.0;
  double ranking_ms = 0.0;       // predicting and sorting the candidates
  double builds_ms = 0.0;        // building candidates on the device (failed builds included)
  double measurements_ms = 0.0;  // warm-up and timed runs
  double total_ms = 0.0;

  friend bool operator==(const TuningCost&, const TuningCost&) = default;
};

// ms expressed as multiplies of a plan that takes plan_ms per multiply: what the tuning cost
// in the unit a user pays back in. 0 when plan_ms is not positive.
inline double spmv_equivalents(double ms, double plan_ms) noexcept {
  return plan_ms > 0.0 ? ms / plan_ms : 0.0;
}

struct TuningRecord {
  TuneMode mode = TuneMode::exhaustive;
  std::uint32_t k = 0;                     // candidates the mode chose to measure
  std::uint64_t expected_multiplies = 0;   // the hint the budget came from
  double budget_ms = 0.0;                  // 0: unbudgeted (a forced exhaustive search)
  TuningCost cost;

  friend bool operator==(const TuningRecord&, const TuningRecord&) = default;
};

}  // namespace spmvd
