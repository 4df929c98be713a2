#include "models/calibration/composed_formats_fit.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <map>
#include <vector>

#include "kernels/format_parts.hpp"
#include "models/calibration/sample_plan.hpp"
#include "models/calibration/sample_timing.hpp"
#include "models/host_build_rates.hpp"
#include "models/row_block_waves.hpp"
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

// A sample and its sample_features, computed once for every format's offering_features.
struct FeaturedSample {
  CsrMatrix<double> matrix;
  MatrixFeatures common;
};

FeaturedSample featured_sample(const SampleShape& shape, const CalibrationOptions& o) {
  FeaturedSample s{.matrix = make_sample(shape, shape_seed(o.seed, shape)), .common = {}};
  s.common = sample_features(s.matrix);
  return s;
}

void fit_launch_floors(const FinishingFitInput& in) {
  const DeviceInfo& info = in.device.info();
  const FeaturedSample tiny =
      featured_sample({.rows = kLatencySampleRows, .row_length = 4}, in.options);
  ModelSet& set = in.state.set;
  for (const FormatEntry& entry : in.state.registry.entries()) {
    const FormatRules& rules = *entry.rules;
    if (!rules.needs_gpu()) continue;
    const MatrixFeatures features = offering_features(rules, tiny.matrix, tiny.common);
    std::vector<FormatParams> timed;
    for (const Candidate& candidate : rules.candidates(features, info)) {
      if (timed.size() == kComposedFloorVariants) break;
      if (std::find(timed.begin(), timed.end(), candidate.params) != timed.end()) continue;
      if (!shares_a_launch(rules, features, candidate)) continue;
      timed.push_back(candidate.params);
      auto op = entry.build(tiny.matrix, set.precision, candidate, in.device);
      set.composed_launch_floors.push_back(
          {.format = rules.id(),
           .params = candidate.params,
           .floor_ms = median_apply_ms(*op, in.device, tiny.matrix, set.precision, in.options)});
    }
  }
}

// One wave of row blocks per block size (models/row_block_waves.hpp): the row_block_candidates
// of the first format that has any, timed on rows of one entry beside one of
// kRowBlockSampleLongRow at two row counts (the samples made once); per block size the slope of
// time over waves.
void fit_row_block_waves(const FinishingFitInput& in) {
  const DeviceInfo& info = in.device.info();
  // Fewer rows than the GPU has warps (a format gives a row a block only then, when a warp a
  // row could not fill it either), and half as many: 4 and 2 waves at block size 128 on an H100.
  const std::int64_t warps =
      static_cast<std::int64_t>(info.sm_count) * info.max_threads_per_sm / info.warp_size;
  const std::int64_t full_rows = warps - 1;
  if (full_rows < 4) return;
  struct Timed {
    double waves = 0.0;
    double ms = 0.0;
  };
  const std::array<FeaturedSample, 2> samples{
      featured_sample({.rows = full_rows, .row_length = 1, .long_row = kRowBlockSampleLongRow},
                      in.options),
      featured_sample({.rows = full_rows / 2, .row_length = 1, .long_row = kRowBlockSampleLongRow},
                      in.options)};
  std::map<std::uint32_t, std::vector<Timed>> by_block_size;
  ModelSet& set = in.state.set;
  for (const FormatEntry& entry : in.state.registry.entries()) {
    const FormatRules& rules = *entry.rules;
    if (!rules.needs_gpu()) continue;
    for (const FeaturedSample& sample : samples) {
      const MatrixFeatures features = offering_features(rules, sample.matrix, sample.common);
      for (const Candidate& candidate : rules.row_block_candidates(features, info)) {
        std::int64_t row_blocks = 0;
        for (const FormatPart& part : rules.parts(features, candidate)) row_blocks += part.row_blocks;
        if (row_blocks == 0) continue;
        auto op = entry.build(sample.matrix, set.precision, candidate, in.device);
        by_block_size[candidate.launch.block_size].push_back(
            {.waves = row_block_waves(info, row_blocks, candidate.launch.block_size),
             .ms = median_apply_ms(*op, in.device, sample.matrix, set.precision, in.options)});
      }
    }
    if (!by_block_size.empty()) break;  // the first format that runs row blocks
  }
  for (const auto& [block_size, timed] : by_block_size) {
    if (timed.size() != 2 || !(timed[0].waves > timed[1].waves)) continue;
    const double wave_ms = (timed[0].ms - timed[1].ms) / (timed[0].waves - timed[1].waves);
    if (wave_ms > 0.0) set.row_block_waves.push_back({.block_size = block_size, .wave_ms = wave_ms});
  }
}

void fit_build_rates(const FinishingFitInput& in) {
  const DeviceInfo& info = in.device.info();
  const FeaturedSample sample = featured_sample(kComposedBuildSample, in.options);
  const auto nonzeros = static_cast<std::int64_t>(sample.matrix.col_indices.size());
  ModelSet& set = in.state.set;
  for (const FormatEntry& entry : in.state.registry.entries()) {
    const FormatRules& rules = *entry.rules;
    if (entry.builds_on_device || rules.needs_gpu() != info.is_gpu) continue;
    const MatrixFeatures features = offering_features(rules, sample.matrix, sample.common);
    const std::vector<Candidate> candidates = rules.candidates(features, info);
    if (candidates.empty() || rules.parts(features, candidates.front()).empty()) continue;
    const auto start = std::chrono::steady_clock::now();
    auto op = entry.build(sample.matrix, set.precision, candidates.front(), in.device);
    in.device.synchronize();  // a build's asynchronous copies and kernels are part of it
    record_build(set.host_build_rates, rules.id(),
                 std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                     .count(),
                 nonzeros, op->device_bytes());
  }
}

}  // namespace

void fit_composed_formats(const FinishingFitInput& in) {
  if (!in.device.info().is_gpu) return;
  fit_launch_floors(in);
  fit_row_block_waves(in);
  fit_build_rates(in);
}

}  // namespace spmvd
