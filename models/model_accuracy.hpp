#pragma once
// How well a model set predicts measured times (model-accuracy, docs/MODELS.md): per format
// family the absolute relative error |predicted - measured| / measured, per matrix the rank
// agreement of the candidates and whether the model's favourite is close to the measured best.

#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/precision.hpp"

namespace spmvd {

// Spearman's rank correlation of paired values: Pearson's r of their ranks, tied values sharing
// their mean rank. nullopt with fewer than 2 pairs or when either side is constant (undefined).
// Throws Error(invalid_argument) when the spans differ in length. O(n log n).
std::optional<double> spearman_rank_correlation(std::span<const double> a,
                                                std::span<const double> b);

// The p-quantile (p in [0, 1]) with linear interpolation between closest ranks (numpy's
// default). Throws Error(invalid_argument) on no values or p outside [0, 1].
double quantile(std::vector<double> values, double p);

// One measured candidate with its prediction.
struct AccuracyPoint {
  std::string matrix;  // label of the matrix
  Precision precision = Precision::fp64;
  std::string format;     // registry name
  std::string family;     // to_string(ModelFamily), "bytes" when the fallback predicted it
  std::string candidate;  // "format block_size=256 threads_per_row=8" for tables
  double predicted_ms = 0.0;
  double measured_ms = 0.0;  // > 0
  // What the model's favourite is chosen by: the tuner's ranking key (the prediction plus the
  // build's charge over the expected multiplies, tuner/tuner.hpp rank_candidates); 0 means
  // predicted_ms.
  double ranked_ms = 0.0;
};

struct ErrorSummary {
  std::string name;  // family or format
  std::size_t count = 0;
  double median_abs_relative_error = 0.0;
  double p90_abs_relative_error = 0.0;
};

struct MatrixAccuracy {
  std::string matrix;
  Precision precision = Precision::fp64;
  std::size_t candidates = 0;
  std::optional<double> spearman;           // predicted vs measured over the candidates
  std::string predicted_best;               // the candidate with the least predicted time
  std::string measured_best;                // the candidate with the least measured time
  double predicted_best_measured_ms = 0.0;  // what the model's favourite measured
  double measured_best_ms = 0.0;
  bool top_within_tolerance = false;  // predicted_best_measured_ms <= (1 + tol) * best
};

struct AccuracyReport {
  double tolerance = 0.10;
  std::vector<ErrorSummary> families;          // sorted by name
  std::vector<ErrorSummary> formats;           // sorted by name
  std::vector<MatrixAccuracy> matrices;        // in order of first appearance
  double fraction_top_within_tolerance = 0.0;  // over matrices (matrix x precision)
  std::optional<double> median_spearman;       // over matrices where it is defined
};

// Groups points by family, by format and by (matrix, precision). Throws Error(invalid_argument)
// naming the point when a measured time is not positive. O(n log n).
AccuracyReport summarize_accuracy(std::span<const AccuracyPoint> points, double tolerance = 0.10);

// Markdown tables (per family, per format, per matrix) and a one-line overall result.
std::string accuracy_markdown(const AccuracyReport& report);
nlohmann::json accuracy_to_json(const AccuracyReport& report);

}  // namespace spmvd
