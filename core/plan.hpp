#pragma once
// The tuner's decision for one (matrix structure, device, precision): which format, with which
// parameters and launch configuration, and the evidence behind the choice.

#include <cstdint>
#include <string>

#include "core/format_id.hpp"
#include "core/format_params.hpp"
#include "core/launch_config.hpp"
#include "core/matrix_features.hpp"
#include "core/plan_partition.hpp"
#include "core/precision.hpp"
#include "core/tuning_record.hpp"

namespace spmvd {

struct Plan {
  FormatId format;
  std::string format_name;  // for people; format is what decisions use
  FormatParams params;
  LaunchConfig launch;
  Precision precision = Precision::fp64;
  double predicted_ms = 0.0;  // model's prediction; 0 where no model ranked the candidates
  double measured_ms = 0.0;   // median of the confirming measurement
  std::uint32_t candidates_measured = 0;
  std::uint32_t tuner_version = 0;
  MatrixFeatures features;
  TuningRecord tuning;  // mode, budget and cost of the tuning that chose this plan
  // The partition or row order the format computed for this matrix (core/plan_partition.hpp),
  // where it computes one: stored beside the plan, not in its JSON (plan_to_json leaves it out),
  // and handed to the build on a cache hit. Empty: the build computes whatever it needs.
  PlanPartitionRef partition;

  // The tuning's total cost in multiplies of this plan.
  double tuning_spmv_equivalents() const noexcept {
    return spmv_equivalents(tuning.cost.total_ms, measured_ms);
  }

  friend bool operator==(const Plan&, const Plan&) = default;
};

// JSON text of a plan and back; from_json throws Error(invalid_argument) naming the missing or
// mistyped field, so a corrupt cache row is detected rather than trusted.
std::string plan_to_json(const Plan& plan);
Plan plan_from_json(const std::string& text);

}  // namespace spmvd
