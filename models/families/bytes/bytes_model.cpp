#include "models/families/bytes/bytes_model.hpp"

#include <algorithm>
#include <optional>

#include "core/error.hpp"
#include "kernels/formats/cusparse_bsr/cusparse_bsr_features.hpp"
#include "kernels/formats/cusparse_bsr/cusparse_bsr_rules.hpp"
#include "models/locality.hpp"

namespace spmvd {
namespace {
constexpr std::uint64_t kSectorBytes = 32;
}

std::uint64_t csr_storage_bytes_estimate(const MatrixFeatures& features, Precision precision) {
  const auto rows = static_cast<std::uint64_t>(std::max<std::int64_t>(features.rows, 0));
  const auto nnz = static_cast<std::uint64_t>(std::max<std::int64_t>(features.nnz, 0));
  return (rows + 1) * 4 + nnz * (4 + value_bytes(precision));
}

namespace {

// The candidate's mean blocks per block row; nullopt where the features do not count them.
std::optional<double> blocks_per_block_row(const MatrixFeatures& features,
                                           const Candidate& candidate) {
  if (features.rows <= 0) return std::nullopt;
  const std::int64_t block_dim = CusparseBsrRules::params_of(candidate).block_dim;
  const std::int64_t blocks = block_dim > 0 ? bsr_block_count(features, block_dim).value_or(0) : 0;
  if (blocks <= 0) return std::nullopt;
  const std::int64_t block_rows = (features.rows + block_dim - 1) / block_dim;
  return static_cast<double>(blocks) / static_cast<double>(block_rows);
}

}  // namespace

double own_floor_ms(const FormatBytesCalibration& own) noexcept {
  return own.block_row_chain.slope > 0.0 ? own.block_row_chain.intercept : own.floor_ms;
}

double block_row_chain_ms(const FormatBytesCalibration& own, const MatrixFeatures& features,
                          const Candidate& candidate) {
  if (!(own.block_row_chain.slope > 0.0)) return 0.0;
  const std::optional<double> per_block_row = blocks_per_block_row(features, candidate);
  return per_block_row ? own.block_row_chain(*per_block_row) : 0.0;
}

double block_row_factor(const FormatBytesCalibration& own, const MatrixFeatures& features,
                        const Candidate& candidate) {
  const std::vector<SamplePoint>& ratio = own.block_row_ratio;
  if (ratio.empty()) return 1.0;
  const std::optional<double> per_block_row = blocks_per_block_row(features, candidate);
  return per_block_row ? interpolate_in_log_x(ratio, *per_block_row) : 1.0;
}

BytesMoved bytes_moved(const MatrixFeatures& features, std::uint64_t matrix_bytes,
                       const DeviceInfo& device, Precision precision,
                       double l2_share_for_x) noexcept {
  const std::uint64_t vb = value_bytes(precision);
  const auto rows = static_cast<std::uint64_t>(std::max<std::int64_t>(features.rows, 0));
  const auto cols = static_cast<std::uint64_t>(std::max<std::int64_t>(features.cols, 0));
  const auto nnz = static_cast<std::uint64_t>(std::max<std::int64_t>(features.nnz, 0));
  BytesMoved b;
  b.matrix_bytes = matrix_bytes;
  b.y_bytes = rows * vb;
  const std::uint64_t x_once = cols * vb;
  const bool x_in_l2 = static_cast<double>(x_once) <=
                       l2_share_for_x * static_cast<double>(device.l2_bytes);
  if (x_in_l2) {
    b.x_bytes = x_once;
  } else {
    const std::uint64_t random_gather = nnz * kSectorBytes;
    const double span = std::clamp(features.mean_row_span_fraction, 0.0, 1.0);
    const std::uint64_t excess = random_gather > x_once ? random_gather - x_once : 0;
    b.x_bytes = x_once + static_cast<std::uint64_t>(span * static_cast<double>(excess));
  }
  return b;
}

Prediction BytesModel::predict_ms(const MatrixFeatures& features, const Candidate& candidate,
                                  const DeviceInfo& device) const {
  return predict_ms(features, candidate, device, x_gather_randomness(features));
}

Prediction BytesModel::predict_ms(const MatrixFeatures& features, const Candidate& candidate,
                                  const DeviceInfo& device, double randomness) const {
  if (calibration_.time_vs_bytes.slope <= 0.0) {
    throw Error(ErrorCode::failed_precondition,
                "bytes model: the bandwidth fit has a non-positive slope (no calibration)");
  }
  const std::uint64_t matrix_bytes = storage_bytes_ ? storage_bytes_(features, candidate)
                                                    : csr_storage_bytes_estimate(features, precision_);
  const BytesMoved moved =
      bytes_moved(features, matrix_bytes, device, precision_, calibration_.l2_share_for_x);
  // x locality (models/locality.hpp): the fit is made on random-column samples.
  const double total = static_cast<double>(moved.total());
  const double ms = (calibration_.launch_overhead_ms() + total * calibration_.time_vs_bytes.slope) *
                    locality_factor(calibration_.banded_ratio, total, randomness);
  return {.ms = ms, .confidence = 0.3 * quality_factor(calibration_.time_vs_bytes.quality)};
}

}  // namespace spmvd
