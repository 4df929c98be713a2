#include "models/calibration/composed_floor_fit.hpp"

#include <algorithm>
#include <vector>

#include "kernels/format_parts.hpp"
#include "models/calibration/sample_plan.hpp"
#include "models/calibration/sample_timing.hpp"
#include "models/sample_generators.hpp"

namespace spmvd {
namespace {

// Whether the candidate's parts share a launch: a composition with a fixed cost of its own
// (BCE's one launch over all its blocks); parts of their own launches each carry theirs.
bool shares_a_launch(const FormatRules& rules, const MatrixFeatures& features,
                     const Candidate& candidate) {
  const std::vector<FormatPart> parts = rules.parts(features, candidate);
  return std::any_of(parts.begin(), parts.end(),
                     [](const FormatPart& part) { return part.launch != kOwnLaunch; });
}

}  // namespace

void fit_composed_launch_floors(const FinishingFitInput& in) {
  const DeviceInfo& info = in.device.info();
  if (!info.is_gpu) return;
  const SampleShape tiny{.rows = kLatencySampleRows, .row_length = 4};
  const CsrMatrix<double> sample = make_sample(tiny, shape_seed(in.options.seed, tiny));
  const MatrixFeatures common = uniform_sample_features(sample);
  ModelSet& set = in.state.set;
  for (const FormatEntry& entry : in.state.registry.entries()) {
    const FormatRules& rules = *entry.rules;
    if (!rules.needs_gpu()) continue;
    MatrixFeatures features = common;
    add_own_features(rules, sample, features);
    std::vector<FormatParams> timed;
    for (const Candidate& candidate : rules.candidates(features, info)) {
      if (timed.size() == kComposedFloorVariants) break;
      if (std::find(timed.begin(), timed.end(), candidate.params) != timed.end()) continue;
      if (!shares_a_launch(rules, features, candidate)) continue;
      timed.push_back(candidate.params);
      auto op = entry.build(sample, set.precision, candidate, in.device);
      set.composed_launch_floors.push_back(
          {.format = rules.id(),
           .params = candidate.params,
           .floor_ms = median_apply_ms(*op, in.device, sample, set.precision, in.options)});
    }
  }
}

}  // namespace spmvd
