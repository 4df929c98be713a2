#include "models/locality.hpp"

#include <algorithm>

namespace spmvd {

double random_span_fraction(double row_length) noexcept {
  if (!(row_length > 1.0)) return 0.0;
  return (row_length - 1.0) / (row_length + 1.0);
}

double x_randomness(const MatrixFeatures& features) noexcept {
  const double random_span = random_span_fraction(features.row_length_mean);
  if (random_span < 0.2) return 1.0;  // (c - 1) / (c + 1) < 0.2: c < 1.5
  return std::clamp(features.mean_row_span_fraction / random_span, 0.0, 1.0);
}

bool x_beyond_l2(const MatrixFeatures& features, const DeviceInfo& device,
                 Precision precision) noexcept {
  const double x_bytes = static_cast<double>(std::max<std::int64_t>(features.cols, 0)) *
                         static_cast<double>(value_bytes(precision));
  return x_bytes > 0.5 * static_cast<double>(device.l2_bytes);
}

double banded_ratio_at(std::span<const SamplePoint> banded_ratio, double x) noexcept {
  constexpr double kLowest = 0.05;
  constexpr double kHighest = 1.5;
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
  return std::clamp(rho, kLowest, kHighest);
}

double locality_factor(std::span<const SamplePoint> banded_ratio, double x,
                       double randomness) noexcept {
  const double rho = banded_ratio_at(banded_ratio, x);
  const double w = std::clamp(randomness, 0.0, 1.0);
  return rho + (1.0 - rho) * w;
}

}  // namespace spmvd
