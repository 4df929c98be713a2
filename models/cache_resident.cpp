#include "models/cache_resident.hpp"

#include <algorithm>
#include <cmath>

namespace spmvd {

double footprint_bytes(const MatrixFeatures& features, std::uint64_t matrix_bytes,
                       Precision precision) noexcept {
  const double vectors = static_cast<double>(std::max<std::int64_t>(features.rows, 0) +
                                             std::max<std::int64_t>(features.cols, 0)) *
                         static_cast<double>(value_bytes(precision));
  return static_cast<double>(matrix_bytes) + vectors;
}

const CacheResidentCorrection* find_correction(std::span<const CacheResidentCorrection> corrections,
                                               const Candidate& candidate) noexcept {
  const CacheResidentCorrection* best = nullptr;
  double best_distance = 0.0;
  for (const CacheResidentCorrection& c : corrections) {
    if (c.format != candidate.format || c.params != candidate.params ||
        c.threads_per_row != candidate.launch.threads_per_row)
      continue;
    const double distance =
        c.block_size == 0 || candidate.launch.block_size == 0
            ? 0.0
            : std::abs(std::log2(static_cast<double>(c.block_size)) -
                       std::log2(static_cast<double>(candidate.launch.block_size)));
    if (best == nullptr || distance < best_distance) {
      best = &c;
      best_distance = distance;
    }
  }
  return best;
}

double correction_factor(const CacheResidentCorrection& correction, double footprint,
                         double l2_bytes) noexcept {
  constexpr double kLowest = 0.25, kHighest = 4.0;
  const std::vector<SamplePoint>& p = correction.ratio_vs_footprint;
  if (p.empty() || !(footprint > 0.0) || footprint >= l2_bytes) return 1.0;
  const auto at_log = [](const SamplePoint& a, const SamplePoint& b, double x) {
    if (!(b.x > a.x)) return b.y;
    const double f = (std::log(x) - std::log(a.x)) / (std::log(b.x) - std::log(a.x));
    return a.y + std::clamp(f, 0.0, 1.0) * (b.y - a.y);
  };
  double kappa = p.back().y;
  if (footprint <= p.front().x) {
    kappa = p.front().y;
  } else if (footprint >= p.back().x) {
    // Fade to the family model between the largest sample and L2.
    kappa = p.back().x < l2_bytes ? at_log(p.back(), {l2_bytes, 1.0}, footprint) : 1.0;
  } else {
    for (std::size_t i = 1; i < p.size(); ++i)
      if (footprint <= p[i].x) {
        kappa = at_log(p[i - 1], p[i], footprint);
        break;
      }
  }
  return std::clamp(kappa, kLowest, kHighest);
}

}  // namespace spmvd
