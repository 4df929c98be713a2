#include "models/part_time_predictor.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "models/families/cpu_gpu/cpu_gpu_record.hpp"

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
    return cpu_coo_time_ms(part.features.nnz, *cpu_gpu) +
           host_copies_ms(bytes, kHostPartCopies, *cpu_gpu);
  }
  const FormatEntry* entry = registry_.find(part.candidate.format);
  if (entry == nullptr) return std::nullopt;
  try {
    const FormatRules& rules = *entry->rules;
    return predictor_
        .predict_ms(rules, part.features, part.candidate, device_,
                    rules.device_bytes(part.features, predictor_.model_set().precision,
                                       part.candidate))
        .ms;
  } catch (const Error&) {
    return std::nullopt;
  }
}

std::optional<double> composed_time_ms(std::span<const FormatPart> parts,
                                       const PartTimePredictor& predictor) {
  if (parts.empty()) throw Error(ErrorCode::invalid_argument, "composed_time_ms: no parts");
  double gpu_ms = 0.0;
  double host_ms = 0.0;
  for (const FormatPart& part : parts) {
    const std::optional<double> ms = predictor.part_ms(part);
    if (!ms) return std::nullopt;
    (part.runs == FormatPart::Runs::host ? host_ms : gpu_ms) += *ms;
  }
  return std::max(gpu_ms, host_ms);
}

}  // namespace spmvd
