#include "models/families/cpu_gpu/cpu_gpu_fit.hpp"

#include <algorithm>
#include <array>
#include <cstddef>
#include <limits>
#include <iterator>
#include <memory>
#include <utility>

#include "core/error.hpp"
#include "kernels/format_parts.hpp"
#include "kernels/formats/cpu_coo/cpu_coo_rules.hpp"
#include "kernels/formats/cpu_gpu_split/cpu_gpu_split_layout.hpp"
#include "kernels/formats/cpu_gpu_split/cpu_gpu_split_rules.hpp"
#include "models/calibration/sample_plan.hpp"
#include "models/calibration/sample_timing.hpp"
#include "models/families/coo/coo_record.hpp"
#include "models/fitting.hpp"
#include "models/locality.hpp"
#include "models/sample_generators.hpp"

namespace spmvd {
namespace {

// The host samples of the paper 003 CPU side beside a GPU: kHostCooSizes doubling sizes of
// rows of CalibrationOptions::coo_row_length (8, the coo stage's) random columns, up to
// kMaxHostCooSampleNnz non-zeros (2^19 rows), every one over kHostCooSampleColumns columns,
// plus the banded twin of each and the same non-zeros one a row (with_row_cost).
//
// Why so wide: a random gather's cost is set by where x lives. The split's host part gathers
// from the whole matrix's x, 1-8M columns on the suite (8-64 MB in fp64, beyond the L3 that a
// 16-core host has to itself), while square samples of this many non-zeros had 2^15-2^18
// columns (x within L2/L3): on the H100 box's host that fc ran random-16M's and the renumbered
// meshes' host parts 1.1-1.6x slower than predicted (2026-11-24, ell_width 1). 2^22 columns
// put a fp64 x at 32 MB (fp32 16 MB), the middle of that range, on every size, so the line
// through the random samples is one cache regime and its slope the marginal cost of a gather
// from DRAM; rows of 8 (the coo stage's) keep y's share of the traffic near a real remainder's.
//
// Why banded twins: a band's gathers hit the cache lines that neighbouring rows loaded
// (banded-17M, the stencils and fem ran at 0.44-0.63 of that single fc); the twin of a sample is
// banded_row_length_sample of its rows and row length, its band in the leading rows x rows
// block of the same rows x cols shape (a square band is what banded matrices are: x streamed
// once and reused row after row).
//
// Cost per precision: 7M random, 7M banded and 7M single-entry-row non-zeros generated and
// built, and 9 applies each (2 warm-up, 7 timed) of a few ms; the whole calibration with them
// took 104-107 s on the H100 box (2026-11-24, spmvd's log).
constexpr int kHostCooSizes = 3;
constexpr std::int64_t kMaxHostCooSampleNnz = std::int64_t{1} << 22;
constexpr std::int64_t kHostCooSampleColumns = std::int64_t{1} << 22;

// Why narrower twins too: the suite's smaller matrices gather from an x of 0.01-8 MB, which the
// host's caches hold in part or whole, and a single rate from the wide x put their host parts
// at 1.6-2.8x their time (ego-Twitter_u, cit-HepPh, cage11; H100 box, model version 34). The
// random samples again over x of 2^15 columns (256 KB in fp64: within a server core's L2) and
// 2^18 (2 MB: past it, within a shared L3) give CpuGpuTimeCoefficients::x_width_ratio, the
// widest (the samples above) at 1: 14M more non-zeros per precision, a few seconds.
constexpr std::int64_t kHostCooNarrowColumns[] = {std::int64_t{1} << 15, std::int64_t{1} << 18};

// The random and banded (nnz, median ms) of the host's cpu_coo samples, and the host's cores.
struct HostCooSamples {
  std::vector<SamplePoint> random;
  std::vector<SamplePoint> banded;
  std::vector<SamplePoint> one_entry;  // rows of one random entry, the same non-zeros
  // Per kHostCooNarrowColumns width, its random samples (the random ones' shapes).
  std::array<std::vector<SamplePoint>, std::size(kHostCooNarrowColumns)> narrow;
  int cores = 0;
};

HostCooSamples time_host_coo_samples(const FormatEntry& entry, const CalibrationPlan& plan,
                                     const CalibrationOptions& o) {
  const std::unique_ptr<Device> host = make_cpu_device();
  CalibrationOptions sizes = o;
  sizes.size_steps = kHostCooSizes;
  HostCooSamples out;
  out.cores = host->info().sm_count;
  const auto time = [&](const CsrMatrix<double>& sample) {
    auto op = entry.build(sample, plan.precision,
                          Candidate{.format = kCpuCooFormatId, .params = {}, .launch = {}}, *host);
    return median_apply_ms(*op, *host, sample, plan.precision, o);
  };
  for (const SampleShape& shape :
       doubling_shapes(std::min(plan.max_sample_nnz, kMaxHostCooSampleNnz), sizes)) {
    const std::int64_t cols = std::max(kHostCooSampleColumns, shape.rows);
    const std::uint64_t seed = shape_seed(o.seed, shape);
    const auto nnz = static_cast<double>(shape.nnz());
    out.random.push_back(
        {nnz, time(wide_uniform_row_length_sample(shape.rows, cols, shape.row_length, seed))});
    CsrMatrix<double> twin = banded_row_length_sample(shape.rows, shape.row_length, seed);
    twin.cols = cols;  // the same x as its random twin, the band in its first rows columns
    out.banded.push_back({nnz, time(twin)});
    // The same non-zeros one a row: what a row costs beyond its entries (with_row_cost). A
    // split's remainder at a balanced K is mostly such rows (one or two entries past K).
    const std::int64_t single_rows = shape.nnz();
    out.one_entry.push_back(
        {nnz, time(wide_uniform_row_length_sample(single_rows, std::max(cols, single_rows), 1,
                                                  seed))});
    for (std::size_t w = 0; w < std::size(kHostCooNarrowColumns); ++w)
      out.narrow[w].push_back(
          {nnz, time(wide_uniform_row_length_sample(shape.rows, kHostCooNarrowColumns[w],
                                                    shape.row_length, seed))});
  }
  return out;
}

// CpuGpuTimeCoefficients::x_width_ratio from the samples: per narrow width its non-zeros' own
// slope (less the row cost's share at row_length, as with_row_cost separates it) against the
// wide samples' (rates), then the widest at 1; a width whose slope is not positive is left out.
std::vector<SamplePoint> fit_x_width_ratio(const HostCooSamples& samples, const HostCooRates& rates,
                                           std::int64_t row_length, Precision precision) {
  const auto x_bytes = [&](std::int64_t cols) {
    return static_cast<double>(cols) * static_cast<double>(value_bytes(precision));
  };
  std::vector<SamplePoint> ratios;
  for (std::size_t w = 0; w < std::size(kHostCooNarrowColumns); ++w) {
    double slope = 0.0;
    try {
      slope = fit_linear(samples.narrow[w]).slope;
    } catch (const Error&) {
      continue;  // fewer than 2 sizes
    }
    const double entry = slope - rates.ms_per_row / static_cast<double>(std::max<std::int64_t>(row_length, 1));
    if (entry > 0.0 && rates.random_ms_per_nnz > 0.0)
      ratios.push_back({x_bytes(kHostCooNarrowColumns[w]), entry / rates.random_ms_per_nnz});
  }
  if (!ratios.empty()) ratios.push_back({x_bytes(kHostCooSampleColumns), 1.0});
  return ratios;
}

// The host path's round trip, timed: a split at K = kHostPathSampleWidth whose host part is a
// single entry (host_path_samples' one_entry: its Eq. 6 one multiply-add), at kRoundTripBlock;
// what the split takes beyond that entry and its copies is the path's fixed cost
// (host_round_trip_ms_of).
// Why one entry: a host part of a few thousand entries is one chunk, one thread's loop of tens
// of microseconds, which a round trip timed on it absorbs (H100 box, 2026-12-06, model version
// 36: 4096 entries one a row gave 53-72 us where the suite's splits with a one-entry host part
// took 44-60 us whole).
// Why not less the split's ELL kernel (4-5 us): a split is predicted as the slower of its
// parts, the host path here, so the sample's own prediction is its measured time only with the
// kernel left in. A calibration that took it out gave 29-30 us where that session's suite
// splits in L2 measured a median 1.33x their predictions; 40 us put them at 15.7 % median
// error (H100 box, 2026-12-07, offline model-accuracy on that suite).
// Why both precisions, in turns, and their median: the round trip is the host path's wake-ups
// and stream waits, the same for either precision (the copies, which differ, are subtracted),
// while one median of a run of them moves by tens of microseconds from one timing to the next:
// timed once per precision, the fp32 and fp64 calibrations of one session held 52.8 and 35.0 us
// (H100 box, 2026-12-07, model version 39), and one value for both (their mean, in the stored
// calibration) took the split's median error over the suite from 20.5 % to 17.7 %. So each
// calibration times kRoundTripRounds rounds of both precisions and takes the median of the
// 2 x kRoundTripRounds round trips.
// Why the wake-up: a host part of one task runs on the CUDA host-function thread, one of
// several wakes oneTBB workers from their sleep first. Over the suite's splits the time the
// model leaves to the round trip (measured less predicted with none) was a median 38-40 us
// where the host part was one chunk and mostly 55-80 us where it was 2 or more (H100 box,
// 2026-12-07, two suite runs, bench/split_host_path.py); a round trip of 35-40 us and 20-25 us
// more for several tasks took the split's median error from 20.5 and 27.0 % to 10.6-13.7 % on
// those runs (offline, the two terms set by hand).
constexpr std::uint32_t kRoundTripBlock = 256;
constexpr int kRoundTripRounds = 3;
// Timed as spmv-bench times a candidate this short (bench/sweep.hpp: 5 warm-ups, 101 timed):
// the host path's wake-ups vary by tens of microseconds from run to run.
constexpr int kRoundTripWarmups = 5;
constexpr int kRoundTripRuns = 101;

// The lower median of `values` (not empty): with an even count, a value that was timed.
double lower_median(std::vector<double> values) {
  const auto middle = values.begin() + static_cast<std::ptrdiff_t>((values.size() - 1) / 2);
  std::nth_element(values.begin(), middle, values.end());
  return *middle;
}

// The round trip and the workers' wake-up (CpuGpuTimeCoefficients::host_round_trip_ms,
// host_wake_ms), the host_path_samples timed in the same rounds, each round both precisions in
// turns: the round trip from the one-entry sample (host_round_trip_ms_of), the wake-up as the
// two-chunk sample's time less the one-chunk one's (each chunk of the two holds as many entries
// as the one, side by side on two threads, so only the second thread's start is left), each
// the median of its 2 x kRoundTripRounds values. nullopt where the split is not registered or
// this is no GPU.
std::optional<std::pair<double, double>> time_host_path(const FormatRegistry& registry,
                                                        Device& device,
                                                        const CalibrationOptions& o,
                                                        const CpuGpuTimeCoefficients& c) {
  const FormatEntry* split = registry.find(kCpuGpuSplitFormatId);
  if (split == nullptr || !device.info().is_gpu) return std::nullopt;
  const HostPathSamples samples = host_path_samples(o.seed);
  const std::array<const CsrMatrix<double>*, 3> matrices{&samples.one_entry, &samples.one_chunk,
                                                         &samples.two_chunks};
  struct Operator {
    Precision precision;
    const CsrMatrix<double>* sample;
    std::unique_ptr<SpmvOperator> split;
  };
  std::vector<Operator> operators;
  for (const Precision precision : {Precision::fp32, Precision::fp64}) {
    for (const CsrMatrix<double>* m : matrices) {
      const Candidate candidate = CpuGpuSplitRules::candidate_for(
          kHostPathSampleWidth, kRoundTripBlock, m->rows, device.info());
      operators.push_back({precision, m, split->build(*m, precision, candidate, device)});
    }
  }
  CalibrationOptions runs = o;
  runs.warmup_runs = kRoundTripWarmups;
  runs.timed_runs = kRoundTripRuns;
  // x down (every column) and the one touched row's partial value up: the split's
  // transfer_values.
  constexpr std::int64_t kHostEntries = 1;
  const CsrMatrix<double>& one = samples.one_entry;
  std::vector<double> round_trips, wakes;
  for (int round = 0; round < kRoundTripRounds; ++round) {
    for (std::size_t p = 0; p < operators.size(); p += matrices.size()) {
      std::array<double, 3> ms{};
      for (std::size_t i = 0; i < matrices.size(); ++i) {
        Operator& op = operators[p + i];
        ms[i] = median_apply_ms(*op.split, device, *op.sample, op.precision, runs);
      }
      const Precision precision = operators[p].precision;
      const auto copy_bytes =
          static_cast<std::uint64_t>(one.cols + kHostEntries) * value_bytes(precision);
      const double x_bytes =
          static_cast<double>(one.cols) * static_cast<double>(value_bytes(precision));
      round_trips.push_back(host_round_trip_ms_of(ms[0], kHostEntries,
                                                  host_chunk_count(kHostEntries), copy_bytes,
                                                  kHostPartCopies, c,
                                                  host_x_width_ratio(c, x_bytes)));
      wakes.push_back(std::max(0.0, ms[2] - ms[1]));
    }
  }
  return std::pair{lower_median(round_trips), lower_median(wakes)};
}

// Copy sizes 4 KiB .. 64 MiB, x4 each: from a small vector's copy (latency-bound) to a large
// matrix's x (a 8M-column fp64 x), tens of ms per precision on PCIe.
std::vector<std::uint64_t> host_copy_sizes() {
  std::vector<std::uint64_t> sizes;
  for (std::uint64_t bytes = 4096; bytes <= (std::uint64_t{64} << 20); bytes *= 4)
    sizes.push_back(bytes);
  return sizes;
}

}  // namespace

HostPathSamples host_path_samples(std::uint64_t seed) {
  const CsrMatrix<double> one_entry_base =
      uniform_row_length_sample(kHostPathSampleRows, kHostPathSampleWidth, seed);
  // Wide enough for a row of two chunks beyond the width.
  const CsrMatrix<double> chunk_base = wide_uniform_row_length_sample(
      kHostPathSampleRows, 4 * kHostChunkMinEntries, kHostPathSampleWidth, seed);
  return {.one_entry = with_long_row(one_entry_base, kHostPathSampleWidth + 1),
          .one_chunk = with_long_row(chunk_base, kHostPathSampleWidth + kHostChunkMinEntries),
          .two_chunks =
              with_long_row(chunk_base, kHostPathSampleWidth + 2 * kHostChunkMinEntries)};
}

void fit_cpu_gpu_record(const FinishingFitInput& in) {
  ModelSet& set = in.state.set;
  const CooRecord* coo = set.records.find<CooRecord>();
  if (const std::optional<CpuGpuTimeCoefficients> cpu_gpu =
          fit_cpu_gpu(in.state.registry, in.device, in.plan, in.options,
                      coo != nullptr ? coo->variants : std::vector<CooCalibration>{},
                      in.state.ell_ms_per_entry))
    set.records.put(*cpu_gpu);
}

std::optional<HostCooRates> fit_host_coo_rates(std::span<const SamplePoint> random,
                                               std::span<const SamplePoint> banded) {
  LinearFit random_fit, banded_fit;
  try {
    random_fit = fit_linear(random);
    banded_fit = fit_linear(banded);
  } catch (const Error&) {
    return std::nullopt;  // fewer than 2 sizes: no slope
  }
  if (!(random_fit.slope > 0.0) || !(banded_fit.slope > 0.0)) return std::nullopt;
  return HostCooRates{.random_ms_per_nnz = random_fit.slope,
                      .banded_ratio = banded_fit.slope / random_fit.slope};
}

HostCooRates with_row_cost(const HostCooRates& rates, double one_entry_slope,
                           std::int64_t row_length) {
  if (row_length < 2) return rates;
  const double length = static_cast<double>(row_length);
  const double s = rates.random_ms_per_nnz;
  const double row = (one_entry_slope - s) * length / (length - 1.0);
  if (!(row > 0.0)) return rates;
  const double entry = s - row / length;
  const double banded_entry = s * rates.banded_ratio - row / length;
  if (!(entry > 0.0) || !(banded_entry > 0.0)) return rates;
  return {.random_ms_per_nnz = entry, .banded_ratio = banded_entry / entry, .ms_per_row = row};
}

std::optional<CpuGpuTimeCoefficients> fit_cpu_gpu(const FormatRegistry& registry, Device& device,
                                                  const CalibrationPlan& plan,
                                                  const CalibrationOptions& o,
                                                  const std::vector<CooCalibration>& coo,
                                                  std::optional<double> ell_ms_per_entry) {
  const FormatEntry* entry = registry.find(kCpuCooFormatId);
  if (entry == nullptr) return std::nullopt;
  HostCooRates rates;
  std::vector<SamplePoint> x_width_ratio;
  int cores = 0;
  if (!device.info().is_gpu) {
    if (coo.empty()) return std::nullopt;
    // The coo stage's cpu_coo line and the banded ratio of its twin (its largest sample; 1
    // where none was timed, as banded_ratio_at reads an empty list). Its samples are square, x
    // as wide as their rows, so this rho is the in-cache one; it predicts nothing here — on the
    // CPU device no composed format is admissible and the coo family prices cpu_coo with the
    // same ratio — and is kept so the record reads the same on both devices.
    rates = {.random_ms_per_nnz = coo.front().time_vs_nnz.slope,
             .banded_ratio = banded_ratio_at(coo.front().banded_ratio,
                                             std::numeric_limits<double>::max())};
    cores = device.info().sm_count;
  } else {
    const HostCooSamples samples = time_host_coo_samples(*entry, plan, o);
    const std::optional<HostCooRates> fitted = fit_host_coo_rates(samples.random, samples.banded);
    if (!fitted) return std::nullopt;
    rates = *fitted;
    try {
      rates = with_row_cost(rates, fit_linear(samples.one_entry).slope, o.coo_row_length);
    } catch (const Error&) {
      // fewer than 2 sizes: no slope; the row cost stays folded into the non-zeros' rate
    }
    x_width_ratio = fit_x_width_ratio(samples, rates, o.coo_row_length, plan.precision);
    cores = samples.cores;
  }
  std::vector<HostCopySample> copies;
  if (device.info().is_gpu)
    copies = time_pinned_copies(device, host_copy_sizes(), o.warmup_runs, o.timed_runs);
  if (rates.random_ms_per_nnz <= 0.0 || cores <= 0) return std::nullopt;
  CpuGpuTimeCoefficients c;
  c.cpu_cores = cores;
  c.cpu_operations_per_ms = 2.0 / (rates.random_ms_per_nnz * static_cast<double>(cores));
  c.cpu_banded_ratio = rates.banded_ratio;
  c.cpu_ms_per_row = rates.ms_per_row;
  c.x_width_ratio = std::move(x_width_ratio);
  if (ell_ms_per_entry && device.info().sm_count > 0) {
    c.gpu_streaming_processors = device.info().sm_count;
    c.gpu_operations_per_ms_per_sp =
        1.0 / (*ell_ms_per_entry * static_cast<double>(device.info().sm_count));
  }
  fit_host_device_copies(copies, c);
  if (c.host_device_bytes_per_ms > 0.0) {
    if (const auto host_path = time_host_path(registry, device, o, c)) {
      c.host_round_trip_ms = host_path->first;
      c.host_wake_ms = host_path->second;
    }
  }
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
