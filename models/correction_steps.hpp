#pragma once
// The terms applied around a family's base prediction, as named steps run in one loop by
// ModelPredictor (issue 14: "corrections are an explicit pipeline"). Each step says what it
// models and which measurement put it there (correction_steps.cpp), and any of them can be
// switched off by name for an ablation (`model-accuracy --without NAME`); docs/MODELS.md gives
// what each buys on the suite.

#include <span>
#include <string_view>

#include "kernels/format_rules.hpp"
#include "models/cache_resident.hpp"
#include "models/families/bytes/bytes_model.hpp"
#include "models/family_model.hpp"
#include "models/model_set.hpp"

namespace spmvd {

// What the steps read. input is the family's, before its base prediction runs.
struct StepContext {
  PredictionInput& input;
  const FormatRules& rules;
  const ModelSet& set;
  const FamilyModel& family;           // the one predicting: the format's own, or bytes standing in
  bool bytes_family_predicts = false;  // the format's own family is bytes, or bytes stands in
  const FormatBytesCalibration* own_bytes = nullptr;    // the format's format_bytes record
  const CacheResidentCorrection* correction = nullptr;  // the variant's kappa, if calibrated
  double footprint_bytes = 0.0;  // what the multiply keeps in L2 (footprint_bytes)
  double l2_bytes = 0.0;
  double matrix_gather_randomness = 1.0;  // the matrix's, once the locality step ran
  double kappa_weight = 0.0;              // correction_weight, 0 without a correction
  double floor_ms = 0.0;                  // the launch floor: the set's, or the format's own
  bool kappa_applied = false;             // set by the cache_resident step
  bool part_of_composition = false;       // a composed format's part, not a whole multiply
};

struct CorrectionStep {
  std::string_view name;
  // Before the base prediction: adjusts ctx.input; nullptr for none.
  void (*adjust_input)(StepContext& ctx);
  // After it, in list order; nullptr for none.
  void (*apply)(StepContext& ctx, Prediction& p);
};

// The steps in the order they run.
std::span<const CorrectionStep> correction_steps() noexcept;

}  // namespace spmvd
