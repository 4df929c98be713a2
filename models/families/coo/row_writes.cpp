#include "models/families/coo/row_writes.hpp"

#include <algorithm>
#include <cmath>

namespace spmvd {
namespace {
constexpr double kSectorBytes = 32.0;
}

double coo_row_write_excess_bytes(std::int64_t rows, std::int64_t written_rows, std::int64_t nnz,
                                  std::int64_t value_bytes,
                                  std::int64_t sample_row_length) noexcept {
  if (rows <= 0 || written_rows <= 0 || value_bytes <= 0 || sample_row_length <= 0) return 0.0;
  const double per_sector = std::max(kSectorBytes / static_cast<double>(value_bytes), 1.0);
  const double sectors = std::ceil(static_cast<double>(rows) / per_sector);
  const double p = std::min(static_cast<double>(written_rows) / static_cast<double>(rows), 1.0);
  // 1 - (1 - p)^v, exact at p = 1 (every sector touched).
  const double touched = p >= 1.0 ? 1.0 : -std::expm1(per_sector * std::log1p(-p));
  const double written = 2.0 * kSectorBytes * sectors * touched;
  const double in_fit = 2.0 * static_cast<double>(value_bytes) * static_cast<double>(nnz) /
                        static_cast<double>(sample_row_length);
  return std::max(written - in_fit, 0.0);
}

}  // namespace spmvd
