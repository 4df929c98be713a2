#include "models/cache_resident.hpp"

#include <algorithm>
#include <cmath>

#include "models/locality.hpp"
#include "models/performance_model.hpp"

namespace spmvd {

double footprint_bytes(const MatrixFeatures& features, std::uint64_t matrix_bytes,
                       Precision precision) noexcept {
  const double vectors = static_cast<double>(std::max<std::int64_t>(features.rows, 0) +
                                             std::max<std::int64_t>(features.cols, 0)) *
                         static_cast<double>(value_bytes(precision));
  return static_cast<double>(matrix_bytes) + vectors;
}

double critical_path_step_ms(double in_l2_ms, double beyond_l2_ms, double footprint,
                             double l2_bytes) noexcept {
  if (!(beyond_l2_ms > 0.0) || !(in_l2_ms > 0.0) || !(footprint > 0.0) || !(l2_bytes > 0.0))
    return in_l2_ms;
  const double w = std::clamp(0.5 + std::log(footprint / l2_bytes) / std::log(4.0), 0.0, 1.0);
  return std::exp((1.0 - w) * std::log(in_l2_ms) + w * std::log(beyond_l2_ms));
}

const CacheResidentCorrection* find_correction(std::span<const CacheResidentCorrection> corrections,
                                               const Candidate& candidate,
                                               double entries_per_thread) noexcept {
  const CacheResidentCorrection* best = nullptr;
  double best_distance = 0.0;
  for (const CacheResidentCorrection& c : corrections) {
    if (c.format != candidate.format || c.params != candidate.params ||
        c.threads_per_row != candidate.launch.threads_per_row)
      continue;
    // E outweighs any block step (models/families/coo/coo_model.hpp).
    const double distance =
        kWorkShapeStepWeight * log2_gap(entries_per_thread, c.entries_per_thread) +
        log2_gap(candidate.launch.block_size, c.block_size);
    if (best == nullptr || distance < best_distance) {
      best = &c;
      best_distance = distance;
    }
  }
  return best;
}

double correction_weight(const CacheResidentCorrection& correction, double footprint,
                         double l2_bytes) noexcept {
  if (correction.ratio_vs_length_rows.log_ms.empty() || !(footprint > 0.0) ||
      footprint >= l2_bytes)
    return 0.0;
  const double largest = correction.largest_footprint_bytes;
  if (!(largest > 0.0) || footprint <= largest || largest >= l2_bytes) return 1.0;
  const double f = std::log(footprint / largest) / std::log(l2_bytes / largest);
  return 1.0 - std::clamp(f, 0.0, 1.0);
}

double correction_factor(const CacheResidentCorrection& correction,
                         const MatrixFeatures& features, double randomness, double footprint,
                         double l2_bytes) {
  constexpr double kLowest = 0.25, kHighest = 4.0;
  const double weight = correction_weight(correction, footprint, l2_bytes);
  if (weight == 0.0) return 1.0;
  const double length = std::max(features.row_length_mean, 1.0);
  const double rows = std::max(static_cast<double>(features.rows), 1.0);
  const double locality =
      correction.banded_ratio_vs_length_rows.log_ms.empty()
          ? 1.0
          : locality_factor(correction.banded_ratio_vs_length_rows(length, rows), randomness);
  const double kappa =
      std::clamp(correction.ratio_vs_length_rows(length, rows) * locality, kLowest, kHighest);
  return 1.0 + (kappa - 1.0) * weight;
}

double randomness_under_correction(double randomness, double weight) noexcept {
  const double w = std::clamp(randomness, 0.0, 1.0);
  return w + (1.0 - w) * std::clamp(weight, 0.0, 1.0);
}

}  // namespace spmvd
