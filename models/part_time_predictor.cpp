#include "models/part_time_predictor.hpp"

#include <algorithm>
#include <map>

#include "core/error.hpp"
#include "models/families/bytes/bytes_record.hpp"
#include "models/families/cpu_gpu/cpu_gpu_record.hpp"
#include "models/locality.hpp"
#include "models/row_block_waves.hpp"

namespace spmvd {

std::optional<double> ModelPartTimePredictor::part_ms(const FormatPart& part) const {
  if (part.runs == FormatPart::Runs::host) {
    const CpuGpuTimeCoefficients* cpu_gpu =
        predictor_.model_set().records.find<CpuGpuTimeCoefficients>();
    if (!cpu_gpu || cpu_gpu->cpu_cores < 2 || !(cpu_gpu->cpu_operations_per_ms > 0.0))
      return std::nullopt;
    // Eq. 6, plus the part's copies (issue 15; paper 003 Sec. 5.1 leaves them out): a host
    // part that moves bytes makes two copies per multiply (x to the host, its rows of y back,
    // kernels/format_parts.hpp), at the calibrated pinned bandwidth and per-copy latency.
    if (part.transfer_values > 0 && !(cpu_gpu->host_device_bytes_per_ms > 0.0))
      return std::nullopt;
    const std::uint64_t bytes =
        part.transfer_values * value_bytes(predictor_.model_set().precision);
    // Eq. 6 at the part's x locality (the whole matrix's sectors per non-zero against the
    // part's row length, core/part_features.hpp), as the coo family prices cpu_coo's gathers;
    // random columns (the calibrated fc itself) where the locality step is switched off.
    const double randomness =
        predictor_.locality_enabled() ? x_gather_randomness(part.features) : 1.0;
    // A part beside a GPU (it moves values) also pays the host path's round trip, and a part of
    // several tasks the wake-up of the workers that run them.
    const double round_trip_ms =
        part.transfer_values > 0
            ? cpu_gpu->host_round_trip_ms + (part.host_tasks > 1 ? cpu_gpu->host_wake_ms : 0.0)
            : 0.0;
    // The part gathers from the whole matrix's x: a random gather's cost at its width.
    const double x_bytes = static_cast<double>(part.features.cols) *
                           static_cast<double>(value_bytes(predictor_.model_set().precision));
    return cpu_coo_time_ms(part.features.nnz, randomness, *cpu_gpu,
                           host_x_width_ratio(*cpu_gpu, x_bytes), part.host_tasks) +
           host_rows_time_ms(part.features.rows - part.features.empty_rows, *cpu_gpu,
                             part.host_tasks) +
           host_copies_ms(bytes, kHostPartCopies, *cpu_gpu) + round_trip_ms;
  }
  const FormatEntry* entry = registry_.find(part.candidate.format);
  if (entry == nullptr) return std::nullopt;
  double ms = 0.0;
  try {
    const FormatRules& rules = *entry->rules;
    ms = predictor_
             .predict_ms(rules, part.features, part.candidate, device_,
                         rules.streamed_bytes(part.features, predictor_.model_set().precision,
                                              part.candidate),
                         composition_footprint_bytes_)
             .ms;
  } catch (const Error&) {
    return std::nullopt;
  }
  // The composition's own bytes, at the DRAM rate of the shared bytes fit (as coo_row_writes
  // prices HYB's scattered rows).
  const std::uint64_t runs =
      static_cast<std::uint64_t>(std::max<std::int64_t>(0, part.scattered_row_runs));
  const auto composition_bytes =
      static_cast<double>(part.row_map_bytes + kScatteredRunBytes * runs);
  const BytesRecord* bytes = predictor_.model_set().records.find<BytesRecord>();
  if (composition_bytes > 0.0 && bytes != nullptr && bytes->shared)
    ms += composition_bytes * bytes->shared->time_vs_bytes.slope;
  // Its format's launches that the composition does not make, each a launch floor, the part's
  // own launch still one (on an H100 two short kernels in a row took 7.4-8.4 us against a
  // 3.8-4.0 us floor: a queued launch hides little of its floor; cuda_strip, 2026-12-06).
  if (part.skipped_launches > 0) {
    const double floor = fixed_ms(part);
    ms = std::max(ms - part.skipped_launches * floor, floor);
  }
  return std::max(ms, row_block_waves_ms(part));
}

double ModelPartTimePredictor::row_block_waves_ms(const FormatPart& part) const {
  if (part.row_blocks <= 0 || !predictor_.row_block_waves_enabled()) return 0.0;
  const std::uint32_t block_size = part.candidate.launch.block_size;
  const std::optional<double> wave_ms =
      row_block_wave_ms(predictor_.model_set().row_block_waves, block_size);
  if (!wave_ms) return 0.0;
  // A partial wave still waits for one chain.
  const double waves = std::max(row_block_waves(device_, part.row_blocks, block_size), 1.0);
  return fixed_ms(part) + waves * *wave_ms;
}

double ModelPartTimePredictor::occupied_ms(const FormatPart& part, double ms) const {
  const double resident =
      static_cast<double>(device_.sm_count) * static_cast<double>(device_.max_threads_per_sm);
  const BytesRecord* bytes = predictor_.model_set().records.find<BytesRecord>();
  const FormatEntry* entry = registry_.find(part.candidate.format);
  if (part.runs != FormatPart::Runs::gpu || resident <= 0.0 || bytes == nullptr ||
      !bytes->shared || entry == nullptr || !predictor_.shared_launch_overlap_enabled())
    return ms;
  const double threads = static_cast<double>(part.candidate.launch.grid_size) *
                         static_cast<double>(part.candidate.launch.block_size);
  const double streamed = static_cast<double>(
      entry->rules->streamed_bytes(part.features, predictor_.model_set().precision,
                                   part.candidate) +
      part.row_map_bytes +
      kScatteredRunBytes *
          static_cast<std::uint64_t>(std::max<std::int64_t>(0, part.scattered_row_runs)));
  const double bytes_ms = streamed * bytes->shared->time_vs_bytes.slope;
  return std::min(ms, std::max(ms * std::min(threads / resident, 1.0), bytes_ms));
}

double ModelPartTimePredictor::fixed_ms(const FormatPart& part) const {
  // The launch floor: the measured time of a multiply with next to no work (launch and
  // completion), which every part's prediction carries and one launch pays once.
  return part.runs == FormatPart::Runs::gpu ? predictor_.model_set().launch_floor_ms : 0.0;
}

std::optional<double> composed_time_ms(std::span<const FormatPart> parts,
                                       const PartTimePredictor& predictor,
                                       double shared_launch_floor_ms) {
  if (parts.empty()) throw Error(ErrorCode::invalid_argument, "composed_time_ms: no parts");
  double gpu_ms = 0.0;
  double host_ms = 0.0;
  // Per shared launch: its fixed cost, paid once (the largest of its parts'), its slowest part
  // and the GPU time its parts occupy.
  struct SharedLaunch {
    double fixed_ms = 0.0;
    double slowest_ms = 0.0;
    double occupied_ms = 0.0;
  };
  std::map<int, SharedLaunch> shared;
  for (const FormatPart& part : parts) {
    const std::optional<double> ms = part_ms_in_launch(part, predictor);
    if (!ms) return std::nullopt;
    if (part.launch == kOwnLaunch) {
      (part.runs == FormatPart::Runs::host ? host_ms : gpu_ms) += *ms;
      continue;
    }
    SharedLaunch& launch = shared[part.launch];
    launch.fixed_ms = std::max(launch.fixed_ms, predictor.fixed_ms(part));
    launch.slowest_ms = std::max(launch.slowest_ms, *ms);
    launch.occupied_ms += predictor.occupied_ms(part, *ms);
  }
  for (const auto& [id, launch] : shared)
    gpu_ms += std::max(launch.fixed_ms, shared_launch_floor_ms) +
              std::max(launch.slowest_ms, launch.occupied_ms);
  return std::max(gpu_ms, host_ms);
}

}  // namespace spmvd
