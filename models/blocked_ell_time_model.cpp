#include "models/blocked_ell_time_model.hpp"

#include <algorithm>
#include <string>

#include "core/error.hpp"

namespace spmvd {

std::vector<RowVectorPartition> partitions_from_bounds(
    const MatrixFeatures& features, std::span<const std::int64_t> upper_lengths) {
  if (upper_lengths.empty()) throw_invalid("partitions_from_bounds: no partition bounds");
  for (std::size_t i = 0; i < upper_lengths.size(); ++i) {
    if (upper_lengths[i] <= 0 || (i > 0 && upper_lengths[i] <= upper_lengths[i - 1])) {
      throw_invalid("partitions_from_bounds: bound " + std::to_string(i) + " (" +
                    std::to_string(upper_lengths[i]) +
                    ") must be positive and greater than the one before");
    }
  }
  if (upper_lengths.back() < features.row_length_max) {
    throw_invalid("partitions_from_bounds: the last bound " +
                  std::to_string(upper_lengths.back()) + " is below the longest row " +
                  std::to_string(features.row_length_max));
  }
  std::vector<RowVectorPartition> parts(upper_lengths.size());
  parts.front().rows = features.empty_rows;
  std::size_t part = 0;
  for (const RowLengthCount& set : features.distribution) {
    while (set.length > upper_lengths[part]) ++part;
    parts[part].rows += set.rows;
    parts[part].width = std::max(parts[part].width, set.length);  // W = max m with b_m != 0
  }
  return parts;
}

double transmission_time_ms(std::int64_t rows, std::int64_t cols, std::int64_t nnz,
                            const BlockedEllTimeCoefficients& c) {
  if (c.transfer_elements_per_ms <= 0.0) {
    throw_invalid("transmission_time_ms: TW must be positive");
  }
  // Paper 000 Sec. 5.3: Ap, Aj, Av and x go in, y comes back: 2N + 2NNZ elements.
  return static_cast<double>(rows + cols + 2 * nnz) / c.transfer_elements_per_ms;
}

double partition_compute_time_ms(const RowVectorPartition& part,
                                 const BlockedEllTimeCoefficients& c) {
  if (c.sm_elements_per_ms <= 0.0) {
    throw_invalid("partition_compute_time_ms: f_p must be positive");
  }
  if (part.rows == 0) return 0.0;
  // Below L rows an SM idles as if it had L rows of this width.
  const std::int64_t effective =
      part.rows <= c.lower_limit_rows ? part.width * c.lower_limit_rows : part.entries();
  return static_cast<double>(effective) / c.sm_elements_per_ms;
}

double blocked_ell_time_ms(const MatrixFeatures& features,
                           std::span<const std::int64_t> upper_lengths,
                           const BlockedEllTimeCoefficients& c) {
  if (c.sm_count <= 0) throw_invalid("blocked_ell_time_ms: s (sm_count) must be positive");
  double compute_ms = 0.0;
  for (const RowVectorPartition& part : partitions_from_bounds(features, upper_lengths)) {
    compute_ms += partition_compute_time_ms(part, c);
  }
  return transmission_time_ms(features.rows, features.cols, features.nnz, c) +
         compute_ms / c.sm_count;
}

}  // namespace spmvd
