#include "models/dram_rate.hpp"

#include <algorithm>

#include "core/csr_matrix.hpp"
#include "models/families/ell/ell_record.hpp"

namespace spmvd {

std::optional<double> dram_bytes_per_ms(const ModelSet& set, const DeviceInfo& device) {
  const EllRecord* ell = set.records.find<EllRecord>();
  if (ell == nullptr) return std::nullopt;
  const auto vb = static_cast<double>(value_bytes(set.precision));
  const auto l2 = static_cast<double>(device.l2_bytes);
  std::optional<double> fastest;
  for (const EllCalibration& c : ell->variants) {
    const LogGridFit& grid = c.time_vs_width_rows;
    const LogGridFit& banded = c.banded_ratio_vs_width_rows;
    if (grid.rows.empty() || banded.log_ms.empty()) continue;
    const double rows = grid.rows.back();
    for (const double width : banded.widths) {
      const double bytes =
          rows * width * (static_cast<double>(sizeof(ColIndex)) + vb) + 2.0 * rows * vb;
      // The launch floor moves no bytes (the bound adds it back).
      const double ms = grid(width, rows) * banded(width, rows) - set.launch_floor_ms;
      if (!(bytes > l2) || !(ms > 0.0)) continue;
      fastest = std::max(fastest.value_or(0.0), bytes / ms);
    }
  }
  return fastest;
}

double dram_bytes(const MatrixFeatures& features, std::uint64_t matrix_bytes, Precision precision) {
  const auto vectors = static_cast<double>(std::max<std::int64_t>(features.rows, 0) +
                                           std::max<std::int64_t>(features.cols, 0));
  return static_cast<double>(matrix_bytes) + vectors * static_cast<double>(value_bytes(precision));
}

}  // namespace spmvd
