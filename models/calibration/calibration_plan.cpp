#include "models/calibration/calibration_plan.hpp"

#include <algorithm>

#include "kernels/formats/cusparse_bsr/cusparse_bsr_rules.hpp"

namespace spmvd {

std::int64_t bsr_sample_block_dim(const FormatParams& params) {
  if (params.empty()) return kBsrDefaultSampleBlockDim;
  const std::uint32_t b = params.as<CusparseBsrParams>("cusparse_bsr").block_dim;
  return b > 0 ? static_cast<std::int64_t>(b) : kBsrDefaultSampleBlockDim;
}

std::int64_t CalibrationPlan::generated_nnz(CalibrationStage stage) const {
  std::vector<SampleShape> shapes;
  for (const PlannedVariant& v : variants)
    if (v.stage == stage) shapes.insert(shapes.end(), v.samples.begin(), v.samples.end());
  std::sort(shapes.begin(), shapes.end());
  shapes.erase(std::unique(shapes.begin(), shapes.end()), shapes.end());
  std::int64_t total = 0;
  for (const SampleShape& s : shapes) total += s.nnz();
  return total;
}

std::int64_t CalibrationPlan::built_nnz(CalibrationStage stage) const {
  std::int64_t total = 0;
  for (const PlannedVariant& v : variants)
    if (v.stage == stage)
      for (const SampleShape& s : v.samples) total += s.nnz();
  return total;
}

std::size_t CalibrationPlan::sample_count(CalibrationStage stage) const {
  std::size_t total = 0;
  for (const PlannedVariant& v : variants)
    if (v.stage == stage) total += v.samples.size();
  return total;
}

}  // namespace spmvd
