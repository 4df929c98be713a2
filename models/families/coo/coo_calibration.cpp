#include "models/families/coo/coo_calibration.hpp"

#include <utility>
#include <vector>

#include "kernels/formats/cpu_coo/cpu_coo_rules.hpp"
#include "kernels/formats/cuda_coo/cuda_coo_rules.hpp"
#include "models/calibration/sample_plan.hpp"

namespace spmvd {
namespace {

void plan_coo(const FormatRegistry& registry, const DeviceInfo& device, Precision precision,
              const CalibrationOptions& o, std::int64_t max_nnz,
              const KernelResourcesFn& kernel_resources, CalibrationPlan& plan) {
  const std::vector<SampleShape> shapes = doubling_shapes(max_nnz, o);
  if (device.is_gpu) {
    if (!registry.find(kCudaCooFormatId)) return;
    for (const std::uint32_t entries : o.coo_entries_per_thread)
      for (const std::uint32_t block : o.coo_block_sizes) {
        const auto measured = kernel_resources ? kernel_resources(CompiledKernel::coo, precision, 1,
                                                                  static_cast<int>(block))
                                               : std::nullopt;
        PlannedVariant v =
            launched_variant(CalibrationStage::coo, kCudaCooFormatId, measured, block, 1);
        v.entries_per_thread = entries;
        v.samples = shapes;
        add_banded_twins(v, {}, shapes.back().rows);
        plan.variants.push_back(std::move(v));
      }
  } else if (registry.find(kCpuCooFormatId)) {
    // oneTBB picks the ranges: no launch to record, block size 0 matches any candidate.
    PlannedVariant v;
    v.stage = CalibrationStage::coo;
    v.format = kCpuCooFormatId;
    v.kernel = {.resources = {}, .threads_per_row = 1};
    v.samples = shapes;
    add_banded_twins(v, {}, shapes.back().rows);
    plan.variants.push_back(std::move(v));
  }
}

void plan(const StagePlanInput& in, CalibrationPlan& plan) {
  plan_coo(in.registry, in.device, in.precision, in.options, in.max_nnz, in.kernel_resources, plan);
}

Candidate candidate(const PlannedVariant& v, const SampleShape& shape, const MatrixFeatures&,
                    const FormatRegistry&, const DeviceInfo&) {
  Candidate c{.format = v.format, .params = {}, .launch = {}};
  if (v.format == kCudaCooFormatId) {
    const auto block = static_cast<std::uint32_t>(v.kernel.resources.threads_per_block);
    c.launch = {.block_size = block,
                .threads_per_row = 0,
                .grid_size = CudaCooRules::grid_size(shape.nnz(), block, v.entries_per_thread)};
  }
  return c;
}

SampleAxis axis(const TimedSample& sample) {
  return {.x = static_cast<double>(sample.shape.nnz()), .predicted_ms = 0.0};
}

void fit(const VariantMeasurements& m, CalibrationState& state) {
  state.set.records.update<CooRecord>([&](CooRecord& r) {
    r.variants.push_back({.kernel = m.variant.kernel,
                          .entries_per_thread = m.variant.entries_per_thread,
                          .time_vs_nnz = fit_linear(m.split.random),
                          .samples = m.split.random,
                          .banded_ratio = m.split.banded_ratio});
  });
}

}  // namespace

CalibrationStageSpec coo_stage() {
  return {.stage = CalibrationStage::coo,
          .name = "coo",
          .plan = plan,
          .candidate = candidate,
          .axis = axis,
          .fit = fit};
}

}  // namespace spmvd
