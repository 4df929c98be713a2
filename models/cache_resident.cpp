#include "models/cache_resident.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "models/locality.hpp"
#include "models/performance_model.hpp"
#include "models/record_presentation.hpp"

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

FamilyTable cache_resident_table(std::span<const CacheResidentCorrection> corrections) {
  FamilyTable table{
      .name = "cache_resident",
      .title = "κ = measured / predicted over a (row length, rows) grid, in L2",
      .headers = with_quality_headers({"format", "params", "block", "lanes", "κ", "row lengths",
                                       "rows", "banded ρ", "footprint MiB"})};
  for (const CacheResidentCorrection& c : corrections) {
    // COO's variants differ by entries per thread, not by parameters.
    std::string params = to_string(c.params);
    if (c.params.empty() && c.entries_per_thread > 0)
      params = "entries_per_thread=" + count_cell(c.entries_per_thread);
    const LogGridFit& kappa = c.ratio_vs_length_rows;
    table.rows.push_back(with_quality_cells(
        {format_name_cell(c.format), std::move(params), nonzero_count_cell(c.block_size),
         nonzero_count_cell(c.threads_per_row), grid_ratio_range_cell(kappa),
         axis_cell(kappa.widths), axis_cell(kappa.rows),
         grid_ratio_range_cell(c.banded_ratio_vs_length_rows),
         number_cell(c.largest_footprint_bytes / (1 << 20), "%.1f")},
        kappa.quality));
  }
  return table;
}

}  // namespace spmvd
