#include "models/performance_model.hpp"

#include <algorithm>
#include <cmath>

namespace spmvd {

double variant_distance(const CalibratedKernel& kernel, std::uint32_t block_size,
                        std::uint32_t threads_per_row) noexcept {
  const auto log2_gap = [](double wanted, double have) {
    if (wanted <= 0.0 || have <= 0.0) return 0.0;
    return std::abs(std::log2(wanted / have));
  };
  // Lanes per row change the kernel's behaviour more than the block size does (paper 004
  // Sec. 6: Warp_Size matters most for CSR vector), so a lanes step outweighs any block step.
  return 16.0 * log2_gap(threads_per_row, kernel.threads_per_row) +
         log2_gap(block_size, kernel.resources.threads_per_block);
}

double quality_factor(const FitQuality& quality) noexcept {
  return std::clamp(1.0 - 2.0 * quality.rms_relative_error, 0.2, 1.0);
}

}  // namespace spmvd
