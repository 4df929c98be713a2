#include "models/families/ell/ell_calibration.hpp"

#include <algorithm>
#include <bit>
#include <utility>
#include <vector>

#include "kernels/formats/cuda_csr_vector/cuda_csr_vector_rules.hpp"
#include "kernels/formats/cuda_ell/cuda_ell_rules.hpp"
#include "models/calibration/sample_plan.hpp"

namespace spmvd {
namespace {

void plan_ell(const FormatRegistry& registry, Precision precision, const CalibrationOptions& o,
              std::int64_t max_nnz, const KernelResourcesFn& kernel_resources,
              CalibrationPlan& plan) {
  if (!registry.find(kCudaEllFormatId)) return;
  // Rows 4096, x4, ... up to where width 16 holds max_nnz (width 32 holds 2x that), so the top
  // of the grid streams from DRAM; the ELL model scales beyond the grid (ell_model.cpp).
  const std::int64_t rows_max = std::max<std::int64_t>(
      kEllMinRows, static_cast<std::int64_t>(std::bit_floor(
                       static_cast<std::uint64_t>(std::max<std::int64_t>(max_nnz / 16, 1)))));
  std::vector<std::int64_t> rows_axis;
  for (std::int64_t r = kEllMinRows; r <= rows_max; r *= 4) rows_axis.push_back(r);
  if (rows_axis.back() != rows_max) rows_axis.push_back(rows_max);
  std::vector<std::int64_t> widths = o.ell_widths;
  std::sort(widths.begin(), widths.end());
  widths.erase(std::unique(widths.begin(), widths.end()), widths.end());

  for (const std::uint32_t block : o.ell_block_sizes) {
    const auto measured = kernel_resources ? kernel_resources(CompiledKernel::ell, precision, 1,
                                                              static_cast<int>(block))
                                           : std::nullopt;
    PlannedVariant v =
        launched_variant(CalibrationStage::ell, kCudaEllFormatId, measured, block, 1);
    for (const std::int64_t rows : rows_axis)
      for (const std::int64_t w : widths) v.samples.push_back({.rows = rows, .row_length = w});
    // The banded ratio is a property of the gathers, not of the block size: on an H100 the
    // ratios of block sizes 128, 256 and 512 agreed within 3 % at every width, and the twins
    // at the most rows are the stage's biggest samples after the widest random ones. Timed on the
    // first block size; the fit gives its grid to the others (share_ell_banded_ratio).
    if (block == o.ell_block_sizes.front()) add_banded_twins(v, kBandedEllWidths, std::nullopt);
    plan.variants.push_back(std::move(v));
  }
}

void plan(const StagePlanInput& in, CalibrationPlan& plan) {
  if (in.device.is_gpu)
    plan_ell(in.registry, in.precision, in.options, in.max_nnz, in.kernel_resources, plan);
}

Candidate candidate(const PlannedVariant& v, const SampleShape& shape, const MatrixFeatures&,
                    const FormatRegistry&, const DeviceInfo& device) {
  const auto block = static_cast<std::uint32_t>(v.kernel.resources.threads_per_block);
  return {.format = v.format,
          .params = FieldSet::of(
              CudaEllParams{.ell_width = static_cast<std::uint32_t>(shape.row_length)}),
          .launch = {.block_size = block,
                     .threads_per_row = 1,
                     .grid_size = CudaCsrVectorRules::grid_size(shape.rows, 1, block, device)}};
}

void fit(const VariantMeasurements& m, CalibrationState& state) {
  const PlannedVariant& variant = m.variant;
  const SplitMeasurements& split = m.split;
  std::vector<GridSample> grid;
  std::vector<SamplePoint> per_entry;  // ms against rows * width
  for (std::size_t s = 0; s < split.random.size(); ++s) {
    grid.push_back({.width = static_cast<double>(split.random_shapes[s].row_length),
                    .rows = static_cast<double>(split.random_shapes[s].rows),
                    .ms = split.random[s].y});
    per_entry.push_back({grid.back().width * grid.back().rows, grid.back().ms});
  }
  const double slope = fit_linear(per_entry).slope;
  if (slope > 0.0 && (!state.ell_ms_per_entry || slope < *state.ell_ms_per_entry))
    state.ell_ms_per_entry = slope;
  EllCalibration c{.kernel = variant.kernel,
                   .time_vs_width_rows = fit_log_grid(grid),
                   // The ELL stage's twins cover kBandedEllWidths at every rows (on one block
                   // size; share_ell_banded_ratio gives it to the others).
                   .banded_ratio_vs_width_rows =
                       split.banded_grid.empty() ? LogGridFit{} : fit_log_grid(split.banded_grid)};
  state.set.records.update<EllRecord>([&](EllRecord& r) { r.variants.push_back(std::move(c)); });
}

// Every ELL record without banded samples of its own takes the grid of the one with them
// (plan_ell times the twins on one block size).
void share_ell_banded_ratio(std::vector<EllCalibration>& ell) {
  const auto measured = std::find_if(ell.begin(), ell.end(), [](const EllCalibration& c) {
    return !c.banded_ratio_vs_width_rows.log_ms.empty();
  });
  if (measured == ell.end()) return;
  const LogGridFit grid = measured->banded_ratio_vs_width_rows;
  for (EllCalibration& c : ell)
    if (c.banded_ratio_vs_width_rows.log_ms.empty()) c.banded_ratio_vs_width_rows = grid;
}

void after_fits(CalibrationState& state) {
  if (state.set.records.find<EllRecord>() == nullptr) return;
  state.set.records.update<EllRecord>([](EllRecord& r) { share_ell_banded_ratio(r.variants); });
}

}  // namespace

CalibrationStageSpec ell_stage() {
  return {.stage = CalibrationStage::ell,
          .name = "ell",
          .plan = plan,
          .candidate = candidate,
          .axis = row_length_axis,
          .fit = fit,
          .after_fits = after_fits};
}

}  // namespace spmvd
