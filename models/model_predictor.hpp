#pragma once
// Ranks candidates with a ModelSet: the base prediction of the format's model family
// (models/families/, by FormatRules::model_family; the bytes family where the set does not
// calibrate the format's own), then the correction steps (models/correction_steps.hpp) in order.

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "kernels/format_rules.hpp"
#include "models/family_model.hpp"
#include "models/model_set.hpp"
#include "models/performance_model.hpp"

namespace spmvd {

// (floor^4 + ms^4)^(1/4): at least floor_ms, ms itself far above it, strictly increasing in ms.
// floor_ms <= 0 returns ms.
double smooth_floor_ms(double ms, double floor_ms) noexcept;

class ModelPredictor {
 public:
  // without: correction steps switched off by name (ablations, `model-accuracy --without`).
  // Throws Error(invalid_argument) naming an unknown step and listing the known ones.
  explicit ModelPredictor(ModelSet set, std::span<const std::string> without = {});
  const ModelSet& model_set() const noexcept { return *set_; }
  // Whether the locality step runs: the host parts of composed formats apply the same term
  // outside the steps' loop (models/part_time_predictor.cpp), and an ablation switches both.
  bool locality_enabled() const noexcept { return locality_enabled_; }
  // Whether the parts of a shared launch overlap (composed_time_ms; the step
  // "shared_launch_overlap" of correction_steps.cpp names it for --without).
  bool shared_launch_overlap_enabled() const noexcept { return shared_launch_overlap_enabled_; }
  // Whether a part's row blocks are priced by waves (ModelPartTimePredictor::part_ms; the step
  // "row_block_waves" names it for --without).
  bool row_block_waves_enabled() const noexcept { return row_block_waves_enabled_; }

  // The family that predicts `rules`' format: the one it names where the set calibrates it,
  // else the bytes family (and that family's name is what accuracy reports group by).
  const FamilyModel& predicting_family(const FormatRules& rules) const;

  // The family's base prediction corrected by every step not switched off; matrix_bytes is the
  // format's streamed bytes (FormatRules::streamed_bytes; csr_storage_bytes_estimate when absent).
  // composition_footprint_bytes: for a part of a composed format, what the whole multiply keeps
  // in L2 (its parts share it), which decides whether the part stays there rather than the
  // part's own bytes; a composed format's own parts are predicted so.
  // Throws Error(failed_precondition) when neither the format's family nor the bytes family is
  // calibrated for it, and Error(invalid_argument) when the candidate cannot launch.
  // Thread-safe.
  Prediction predict_ms(const FormatRules& rules, const MatrixFeatures& features,
                        const Candidate& candidate, const DeviceInfo& device,
                        std::optional<std::uint64_t> matrix_bytes = std::nullopt,
                        std::optional<double> composition_footprint_bytes = std::nullopt) const;

 private:
  const FamilyModel* family_named(std::string_view name) const noexcept;
  // The dram_rate bound of a composed multiply (0 where it does not apply).
  double composed_dram_bound_ms(std::span<const FormatPart> parts, const MatrixFeatures& features,
                                double footprint, const DeviceInfo& device) const;
  // Owned through a pointer so that the families' references to it survive a move.
  std::unique_ptr<const ModelSet> set_;
  std::vector<std::unique_ptr<FamilyModel>>
      families_;  // one per model_families() entry with a model
  std::vector<bool> step_enabled_;                      // one per correction_steps() entry
  bool cache_resident_enabled_ = true;  // its kappa also stays unfound where it is off
  bool locality_enabled_ = true;
  bool composed_floor_enabled_ = true;  // a composed launch's own floor (composed_time_ms)
  bool shared_launch_overlap_enabled_ = true;
  bool row_block_waves_enabled_ = true;
  bool block_row_chain_enabled_ = true;  // off: a BSR record's floor is its tiny sample's
  bool dram_rate_enabled_ = true;        // the composed path's dram_rate bound
};

}  // namespace spmvd
