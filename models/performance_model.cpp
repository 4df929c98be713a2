#include "models/performance_model.hpp"

#include <algorithm>
#include <cmath>

namespace spmvd {

double log2_gap(double wanted, double have) noexcept {
  if (wanted <= 0.0 || have <= 0.0) return 0.0;
  return std::abs(std::log2(wanted / have));
}

double variant_distance(const CalibratedKernel& kernel, std::uint32_t block_size,
                        std::uint32_t threads_per_row) noexcept {
  // Paper 004 Sec. 6: Warp_Size matters most for CSR vector.
  return kWorkShapeStepWeight * log2_gap(threads_per_row, kernel.threads_per_row) +
         log2_gap(block_size, kernel.resources.threads_per_block);
}

double quality_factor(const FitQuality& quality) noexcept {
  return std::clamp(1.0 - 2.0 * quality.rms_relative_error, 0.2, 1.0);
}

}  // namespace spmvd
