#include "models/families/cpu_gpu/cpu_gpu_fit.hpp"

#include <algorithm>
#include <memory>

#include "core/error.hpp"
#include "kernels/formats/cpu_coo/cpu_coo_rules.hpp"
#include "models/calibration/sample_plan.hpp"
#include "models/calibration/sample_timing.hpp"
#include "models/families/coo/coo_record.hpp"
#include "models/fitting.hpp"
#include "models/sample_generators.hpp"

namespace spmvd {
namespace {

// The host samples of the paper 003 CPU side beside a GPU: 4 doubling sizes up to 2^21
// non-zeros, a few ms each on a 16-core host (well under a second per precision).
constexpr int kHostCooSizes = 4;
constexpr std::int64_t kMaxHostCooSampleNnz = std::int64_t{1} << 21;

// Copy sizes 4 KiB .. 64 MiB, x4 each: from a small vector's copy (latency-bound) to a large
// matrix's x (a 8M-column fp64 x), tens of ms per precision on PCIe.
std::vector<std::uint64_t> host_copy_sizes() {
  std::vector<std::uint64_t> sizes;
  for (std::uint64_t bytes = 4096; bytes <= (std::uint64_t{64} << 20); bytes *= 4)
    sizes.push_back(bytes);
  return sizes;
}

}  // namespace

void fit_cpu_gpu_record(const FinishingFitInput& in) {
  ModelSet& set = in.state.set;
  const CooRecord* coo = set.records.find<CooRecord>();
  if (const std::optional<CpuGpuTimeCoefficients> cpu_gpu =
          fit_cpu_gpu(in.state.registry, in.device, in.plan, in.options,
                      coo != nullptr ? coo->variants : std::vector<CooCalibration>{},
                      in.state.ell_ms_per_entry))
    set.records.put(*cpu_gpu);
}

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
  std::vector<HostCopySample> copies;
  if (device.info().is_gpu)
    copies = time_pinned_copies(device, host_copy_sizes(), o.warmup_runs, o.timed_runs);
  if (cpu_ms_per_nnz <= 0.0 || cores <= 0) return std::nullopt;
  CpuGpuTimeCoefficients c;
  c.cpu_cores = cores;
  c.cpu_operations_per_ms = 2.0 / (cpu_ms_per_nnz * static_cast<double>(cores));
  if (ell_ms_per_entry && device.info().sm_count > 0) {
    c.gpu_streaming_processors = device.info().sm_count;
    c.gpu_operations_per_ms_per_sp =
        1.0 / (*ell_ms_per_entry * static_cast<double>(device.info().sm_count));
  }
  fit_host_device_copies(copies, c);
  return c;
}

void fit_host_device_copies(std::span<const HostCopySample> samples, CpuGpuTimeCoefficients& c) {
  c.host_device_bytes_per_ms = 0.0;
  c.host_device_copy_latency_ms = 0.0;
  std::vector<SamplePoint> down, up;
  for (const HostCopySample& s : samples) {
    if (s.bytes == 0 || !(s.device_to_host_ms > 0.0) || !(s.host_to_device_ms > 0.0)) continue;
    down.push_back({static_cast<double>(s.bytes), s.device_to_host_ms});
    up.push_back({static_cast<double>(s.bytes), s.host_to_device_ms});
  }
  if (down.size() < 2) return;
  LinearFit down_fit, up_fit;
  try {
    down_fit = fit_linear(down);
    up_fit = fit_linear(up);
  } catch (const Error&) {
    return;  // all at one size: no slope
  }
  if (!(down_fit.slope > 0.0) || !(up_fit.slope > 0.0)) return;
  c.host_device_bytes_per_ms = 1.0 / std::max(down_fit.slope, up_fit.slope);
  c.host_device_copy_latency_ms = std::max({0.0, down_fit.intercept, up_fit.intercept});
}

}  // namespace spmvd
