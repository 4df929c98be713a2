#include "bench/feature_report.hpp"

#include <algorithm>
#include <iomanip>

namespace spmvd {

std::vector<RowLengthCount> most_common_lengths(const MatrixFeatures& features, std::size_t top) {
  std::vector<RowLengthCount> sorted = features.distribution;
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const RowLengthCount& a, const RowLengthCount& b) { return a.rows > b.rows; });
  if (sorted.size() > top) sorted.resize(top);
  return sorted;
}

namespace {
// Values a BSR of this block size stores per non-zero of the matrix (1 = every block full).
double stored_per_nonzero(const MatrixFeatures& f, const BlockCount& b) {
  return f.nnz > 0 ? static_cast<double>(b.blocks * b.block_dim * b.block_dim) /
                         static_cast<double>(f.nnz)
                   : 0.0;
}
}  // namespace

nlohmann::json features_to_json(const MatrixFeatures& f, const Fingerprint& fingerprint,
                                std::size_t top) {
  nlohmann::json common = nlohmann::json::array();
  for (const auto& entry : most_common_lengths(f, top))
    common.push_back({{"length", entry.length}, {"rows", entry.rows}});
  nlohmann::json bsr_fill = nlohmann::json::array();
  for (const BlockCount& b : f.block_counts)
    bsr_fill.push_back({{"block_dim", b.block_dim},
                        {"blocks", b.blocks},
                        {"stored_per_nonzero", stored_per_nonzero(f, b)}});
  return {
      {"rows", f.rows},
      {"cols", f.cols},
      {"nnz", f.nnz},
      {"row_length", {{"min", f.row_length_min},
                      {"mean", f.row_length_mean},
                      {"max", f.row_length_max},
                      {"stddev", f.row_length_stddev}}},
      {"empty_rows", f.empty_rows},
      {"distribution", {{"distinct_lengths", f.distribution.size()}, {"most_common", common}}},
      {"mean_row_span_fraction", f.mean_row_span_fraction},
      {"x_sectors_per_nonzero", f.x_sectors_per_nonzero},
      {"bsr_fill", bsr_fill},
      {"fingerprint", fingerprint.hex()},
  };
}

void print_features(std::ostream& out, const MatrixFeatures& f, const Fingerprint& fingerprint,
                    std::size_t top) {
  const auto key = [&out](const char* name) -> std::ostream& {
    return out << "  " << std::left << std::setw(22) << name;
  };
  key("rows") << f.rows << "\n";
  key("cols") << f.cols << "\n";
  key("nnz") << f.nnz << "\n";
  key("row length") << "min " << f.row_length_min << "  mean " << std::fixed << std::setprecision(2)
                    << f.row_length_mean << "  max " << f.row_length_max << "  stddev "
                    << f.row_length_stddev << std::defaultfloat << "\n";
  key("empty rows") << f.empty_rows << "\n";
  key("DF") << f.distribution.size() << " distinct lengths; most common:";
  for (const auto& entry : most_common_lengths(f, top))
    out << " " << entry.length << " (" << entry.rows << " rows)";
  out << "\n";
  key("mean row span") << std::setprecision(4) << f.mean_row_span_fraction << std::defaultfloat
                       << " of cols\n";
  key("x sectors") << std::setprecision(4) << f.x_sectors_per_nonzero << std::defaultfloat
                   << " per non-zero (groups of " << kXGatherGroupRows << " rows)\n";
  key("BSR fill");
  for (const BlockCount& b : f.block_counts)
    out << " " << b.block_dim << "x" << b.block_dim << ": " << b.blocks << " blocks, "
        << std::setprecision(3) << stored_per_nonzero(f, b) << std::defaultfloat
        << " stored per non-zero;";
  out << "\n";
  key("fingerprint") << fingerprint.hex() << "\n";
}

}  // namespace spmvd
