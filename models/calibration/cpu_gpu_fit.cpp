#include "models/calibration/cpu_gpu_fit.hpp"

#include <algorithm>
#include <memory>

#include "kernels/formats/cpu_coo/cpu_coo_rules.hpp"
#include "models/calibration/sample_plan.hpp"
#include "models/calibration/sample_timing.hpp"
#include "models/fitting.hpp"
#include "models/sample_generators.hpp"

namespace spmvd {
namespace {

// The host samples of the paper 003 CPU side beside a GPU: 4 doubling sizes up to 2^21
// non-zeros, a few ms each on a 16-core host (well under a second per precision).
constexpr int kHostCooSizes = 4;
constexpr std::int64_t kMaxHostCooSampleNnz = std::int64_t{1} << 21;

}  // namespace

std::optional<CpuGpuTimeCoefficients> fit_cpu_gpu(const FormatRegistry& registry, Device& device,
                                                  const CalibrationPlan& plan,
                                                  const CalibrationOptions& o,
                                                  const std::vector<CooCalibration>& coo,
                                                  std::optional<double> ell_ms_per_entry) {
  const FormatEntry* entry = registry.find(kCpuCooFormatId);
  if (entry == nullptr) return std::nullopt;
  double cpu_ms_per_nnz = 0.0;
  int cores = 0;
  if (!device.info().is_gpu) {
    if (coo.empty()) return std::nullopt;
    cpu_ms_per_nnz = coo.front().time_vs_nnz.slope;
    cores = device.info().sm_count;
  } else {
    const std::unique_ptr<Device> host = make_cpu_device();
    CalibrationOptions sizes = o;
    sizes.size_steps = kHostCooSizes;
    std::vector<SamplePoint> points;
    for (const SampleShape& shape :
         doubling_shapes(std::min(plan.max_sample_nnz, kMaxHostCooSampleNnz), sizes)) {
      const CsrMatrix<double> sample =
          uniform_row_length_sample(shape.rows, shape.row_length, shape_seed(o.seed, shape));
      auto op =
          entry->build(sample, plan.precision,
                       Candidate{.format = kCpuCooFormatId, .params = {}, .launch = {}}, *host);
      points.push_back({static_cast<double>(shape.nnz()),
                        median_apply_ms(*op, *host, sample, plan.precision, o)});
    }
    cpu_ms_per_nnz = fit_linear(points).slope;
    cores = host->info().sm_count;
  }
  if (cpu_ms_per_nnz <= 0.0 || cores <= 0) return std::nullopt;
  CpuGpuTimeCoefficients c;
  c.cpu_cores = cores;
  c.cpu_operations_per_ms = 2.0 / (cpu_ms_per_nnz * static_cast<double>(cores));
  if (ell_ms_per_entry && device.info().sm_count > 0) {
    c.gpu_streaming_processors = device.info().sm_count;
    c.gpu_operations_per_ms_per_sp =
        1.0 / (*ell_ms_per_entry * static_cast<double>(device.info().sm_count));
  }
  return c;
}

}  // namespace spmvd
