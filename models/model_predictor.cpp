#include "models/model_predictor.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/error.hpp"
#include "kernels/format_registry.hpp"
#include "models/cache_resident.hpp"
#include "models/correction_steps.hpp"
#include "models/dram_rate.hpp"
#include "models/families/bytes/bytes_family.hpp"
#include "models/families/bytes/bytes_model.hpp"
#include "models/locality.hpp"
#include "models/part_time_predictor.hpp"

namespace spmvd {

double smooth_floor_ms(double ms, double floor_ms) noexcept {
  if (!(floor_ms > 0.0)) return ms;
  const double a = std::max(ms, 0.0) / floor_ms;
  return floor_ms * std::sqrt(std::sqrt(1.0 + a * a * a * a));
}

ModelPredictor::ModelPredictor(ModelSet set, std::span<const std::string> without)
    : set_(std::make_unique<const ModelSet>(std::move(set))) {
  for (const FamilyEntry& entry : model_families())
    if (entry.make != nullptr) families_.push_back(entry.make(*set_));
  const std::span<const CorrectionStep> steps = correction_steps();
  step_enabled_.assign(steps.size(), true);
  for (const std::string& name : without) {
    bool known = false;
    for (std::size_t i = 0; i < steps.size(); ++i) {
      if (steps[i].name != name) continue;
      step_enabled_[i] = false;
      known = true;
    }
    if (name == "cache_resident") cache_resident_enabled_ = false;
    if (name == "locality") locality_enabled_ = false;
    if (name == "composed_floor") composed_floor_enabled_ = false;
    if (name == "shared_launch_overlap") shared_launch_overlap_enabled_ = false;
    if (name == "row_block_waves") row_block_waves_enabled_ = false;
    if (name == "bsr_block_row_chain") block_row_chain_enabled_ = false;
    if (name == "dram_rate") dram_rate_enabled_ = false;
    if (!known) {
      std::string names;
      for (const CorrectionStep& step : steps)
        if (names.find(step.name) == std::string::npos)
          names += (names.empty() ? "" : ", ") + std::string(step.name);
      throw_invalid("no correction step named '" + name + "' (the steps: " + names + ")");
    }
  }
}

double ModelPredictor::composed_dram_bound_ms(std::span<const FormatPart> parts,
                                              const MatrixFeatures& features, double footprint,
                                              const DeviceInfo& device) const {
  // dram_rate (correction_steps.cpp) on a composed multiply whose bytes exceed L2. Its parts
  // are priced each at its own rows, where the ell grid's samples sit in L2: cage11-x32's BCE
  // blocks of 20,000-200,000 rows summed to 3.3 TB/s above the launch floor in fp64 (76.5 us,
  // measured 103.7-105.8, H100 2026-12-07, version 38's suite run), while the multiply streams
  // its 0.25 GB from DRAM. Every GPU part moves at least its non-zeros' index and value
  // (its format's DRAM bytes where fewer: BRO's compressed streams), its row map and a y
  // sector a scattered run; the whole multiply x and y once. Not where a part runs on the host.
  if (!(footprint > static_cast<double>(device.l2_bytes))) return 0.0;
  const std::optional<double> rate = dram_bytes_per_ms(*set_, device);
  if (!rate) return 0.0;
  const std::uint64_t entry_bytes = sizeof(ColIndex) + value_bytes(set_->precision);
  std::uint64_t bytes = 0;
  for (const FormatPart& part : parts) {
    if (part.runs != FormatPart::Runs::gpu) return 0.0;
    const FormatEntry* entry = format_registry().find(part.candidate.format);
    if (entry == nullptr) return 0.0;
    const auto nnz = static_cast<std::uint64_t>(std::max<std::int64_t>(part.features.nnz, 0));
    bytes += std::min(nnz * entry_bytes, entry->rules->dram_streamed_bytes(
                                             part.features, set_->precision, part.candidate)) +
             part.row_map_bytes +
             kScatteredRunBytes *
                 static_cast<std::uint64_t>(std::max<std::int64_t>(0, part.scattered_row_runs));
  }
  return set_->launch_floor_ms + dram_bytes(features, bytes, set_->precision) / *rate;
}

const FamilyModel* ModelPredictor::family_named(std::string_view name) const noexcept {
  for (const auto& family : families_)
    if (family->name() == name) return family.get();
  return nullptr;
}

const FamilyModel& ModelPredictor::predicting_family(const FormatRules& rules) const {
  const FamilyModel* own = family_named(rules.model_family());
  if (own != nullptr && own->calibrated()) return *own;
  const FamilyModel* bytes = family_named(kBytesFamily);
  if (bytes == nullptr || !bytes->calibrated())
    throw Error(ErrorCode::failed_precondition, "no calibrated model for format family " +
                                                    std::string(rules.model_family()) +
                                                    " and no bytes model to fall back on");
  return *bytes;
}

Prediction ModelPredictor::predict_ms(const FormatRules& rules, const MatrixFeatures& features,
                                      const Candidate& candidate, const DeviceInfo& device,
                                      std::optional<std::uint64_t> matrix_bytes,
                                      std::optional<double> composition_footprint_bytes) const {
  // What the multiply keeps in L2: the format's bytes and both vectors, or its composition's.
  const double footprint = std::max(
      composition_footprint_bytes.value_or(0.0),
      footprint_bytes(features,
                      matrix_bytes.value_or(csr_storage_bytes_estimate(features, set_->precision)),
                      set_->precision));
  // A composed format is its parts, each predicted (and corrected) as the format it runs as.
  const std::vector<FormatPart> parts = rules.parts(features, candidate);
  if (!parts.empty()) {
    // The parts run in one multiply and share L2: each is cache-resident only where the whole
    // is (ego-Twitter_u's BCE in fp64, 2.7M nonzeros, its blocks each well inside L2 and the
    // whole beyond its largest in-L2 sample, was predicted 1.7x fast; H100, 2026-12-06).
    const ModelPartTimePredictor part_predictor(*this, format_registry(), device, footprint);
    const std::optional<double> ms = composed_time_ms(
        parts, part_predictor,
        composed_floor_enabled_
            ? composed_launch_floor_ms(set_->composed_launch_floors, candidate).value_or(0.0)
            : 0.0);
    if (!ms)
      throw Error(ErrorCode::failed_precondition,
                  "format " + std::string(rules.name()) +
                      ": a part cannot be predicted (its format's family or the host side is "
                      "not calibrated)");
    // Each part of its own launch carries its launch floor; a shared launch pays its own once.
    Prediction p{.ms = *ms, .confidence = 1.0, .includes_fixed_cost = true};
    if (dram_rate_enabled_)
      p.ms = std::max(p.ms, composed_dram_bound_ms(parts, features, footprint, device));
    return p;
  }
  const FamilyModel& family = predicting_family(rules);
  const FamilyModel* named = family_named(rules.model_family());
  // Random gathers (what calibration samples) until the locality step says otherwise.
  PredictionInput input{.features = features,
                        .candidate = candidate,
                        .device = device,
                        .matrix_bytes = matrix_bytes,
                        .gather_randomness = 1.0,
                        .span_randomness = 1.0};
  const auto l2_bytes = static_cast<double>(device.l2_bytes);
  // Below L2 each calibrated variant has its kappa (models/cache_resident.hpp), keyed as the
  // format's family launches it.
  const CacheResidentCorrection* correction =
      find_correction(set_->cache_resident, candidate,
                      named != nullptr ? named->entries_per_thread(features, candidate) : 0.0);
  const FormatBytesCalibration* own = own_bytes_calibration(*set_, candidate);
  StepContext ctx{
      .input = input,
      .rules = rules,
      .set = *set_,
      .family = family,
      .bytes_family_predicts = family.name() == kBytesFamily,
      .own_bytes = own,
      .correction = correction,
      .footprint_bytes = footprint,
      .l2_bytes = l2_bytes,
      .matrix_gather_randomness = 1.0,
      .kappa_weight =
          correction != nullptr ? correction_weight(*correction, footprint, l2_bytes) : 0.0,
      .floor_ms = std::max(set_->launch_floor_ms, own == nullptr             ? 0.0
                                                  : block_row_chain_enabled_ ? own_floor_ms(*own)
                                                                             : own->floor_ms),
      .part_of_composition = composition_footprint_bytes.has_value()};
  // A step switched off leaves no trace: without cache_resident, no correction either.
  if (!cache_resident_enabled_) ctx.correction = nullptr;
  const std::span<const CorrectionStep> steps = correction_steps();
  for (std::size_t i = 0; i < steps.size(); ++i)
    if (step_enabled_[i] && steps[i].adjust_input != nullptr) steps[i].adjust_input(ctx);
  Prediction p = family.predict_ms(input);
  for (std::size_t i = 0; i < steps.size(); ++i)
    if (step_enabled_[i] && steps[i].apply != nullptr) steps[i].apply(ctx, p);
  return p;
}

}  // namespace spmvd
