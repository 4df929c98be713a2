#include "models/locality.hpp"

#include <algorithm>
#include <cmath>

namespace spmvd {
namespace {
// One noisy banded sample must not zero or blow up every prediction.
constexpr double kLowestBandedRatio = 0.05;
constexpr double kHighestBandedRatio = 1.5;
}  // namespace

double random_span_fraction(double row_length) noexcept {
  if (!(row_length > 1.0)) return 0.0;
  return (row_length - 1.0) / (row_length + 1.0);
}

double random_sectors_per_nonzero(double row_length, double cols) noexcept {
  const double group = static_cast<double>(kXGatherGroupRows) * std::max(row_length, 1.0);
  const double sectors = std::max(std::ceil(cols / static_cast<double>(kXSectorColumns)), 1.0);
  // E[distinct] of `group` uniform draws from `sectors` bins.
  return sectors * -std::expm1(group * std::log1p(-1.0 / sectors)) / group;
}

double banded_sectors_per_nonzero(double row_length) noexcept {
  const double length = std::max(row_length, 1.0);
  const double g = static_cast<double>(kXGatherGroupRows);
  const double s = static_cast<double>(kXSectorColumns);
  // g + L - 1 consecutive columns start anywhere in a sector: (g + L - 1 + s - 1) / s sectors.
  return (g + length - 1.0 + s - 1.0) / s / (g * length);
}

namespace {
// Where `sectors` (x sectors per non-zero) lies between a band and random columns of the
// matrix's mean row length and column count.
double randomness_of_sectors(const MatrixFeatures& features, double sectors) noexcept {
  const double length = features.row_length_mean;
  const double random = random_sectors_per_nonzero(length, static_cast<double>(features.cols));
  const double banded = banded_sectors_per_nonzero(length);
  // Too few columns for random gathers to differ from a band: both are the same few sectors.
  if (random - banded < 0.05) return 1.0;
  return std::clamp((sectors - banded) / (random - banded), 0.0, 1.0);
}
}  // namespace

double x_gather_randomness(const MatrixFeatures& features) noexcept {
  return randomness_of_sectors(features, features.x_sectors_per_nonzero);
}

double x_gather_randomness(const MatrixFeatures& features, double sectors_per_nonzero) noexcept {
  return randomness_of_sectors(features, sectors_per_nonzero);
}

double x_span_randomness(const MatrixFeatures& features) noexcept {
  const double random_span = random_span_fraction(features.row_length_mean);
  if (random_span < 0.2) return 1.0;  // (c - 1) / (c + 1) < 0.2: c < 1.5
  return std::clamp(features.mean_row_span_fraction / random_span, 0.0, 1.0);
}

double banded_ratio_at(std::span<const SamplePoint> banded_ratio, double x) noexcept {
  if (banded_ratio.empty()) return 1.0;
  double rho = banded_ratio.back().y;
  if (x <= banded_ratio.front().x) {
    rho = banded_ratio.front().y;
  } else {
    for (std::size_t i = 1; i < banded_ratio.size(); ++i) {
      const SamplePoint& a = banded_ratio[i - 1];
      const SamplePoint& b = banded_ratio[i];
      if (x <= b.x) {
        rho = b.x > a.x ? a.y + (b.y - a.y) * (x - a.x) / (b.x - a.x) : b.y;
        break;
      }
    }
  }
  return std::clamp(rho, kLowestBandedRatio, kHighestBandedRatio);
}

double locality_factor(std::span<const SamplePoint> banded_ratio, double x,
                       double randomness) noexcept {
  return locality_factor(banded_ratio_at(banded_ratio, x), randomness);
}

double locality_factor(double rho, double randomness) noexcept {
  const double clamped = std::clamp(rho, kLowestBandedRatio, kHighestBandedRatio);
  const double w = std::clamp(randomness, 0.0, 1.0);
  return clamped + (1.0 - clamped) * w;
}

}  // namespace spmvd
