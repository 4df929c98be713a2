#include "models/model_accuracy.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <numeric>
#include <sstream>

#include "core/error.hpp"

namespace spmvd {
namespace {

// Ranks 1..n, ties given the mean of the ranks they span.
std::vector<double> mean_ranks(std::span<const double> values) {
  std::vector<std::size_t> order(values.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(),
            [&](std::size_t i, std::size_t j) { return values[i] < values[j]; });
  std::vector<double> ranks(values.size());
  for (std::size_t i = 0; i < order.size();) {
    std::size_t j = i;
    while (j + 1 < order.size() && values[order[j + 1]] == values[order[i]]) ++j;
    const double rank = (static_cast<double>(i) + static_cast<double>(j)) / 2.0 + 1.0;
    for (std::size_t k = i; k <= j; ++k) ranks[order[k]] = rank;
    i = j + 1;
  }
  return ranks;
}

ErrorSummary summarize_errors(const std::string& name, std::vector<double> errors) {
  return {.name = name,
          .count = errors.size(),
          .median_abs_relative_error = quantile(errors, 0.5),
          .p90_abs_relative_error = quantile(errors, 0.9)};
}

std::string fixed(double value, int digits) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", digits, value);
  return text;
}

std::string percent(double fraction) { return fixed(100.0 * fraction, 1) + " %"; }

void error_table(std::ostringstream& out, const char* what, const std::vector<ErrorSummary>& rows) {
  out << "| " << what << " | candidates | median abs. rel. error | p90 abs. rel. error |\n"
      << "| --- | ---: | ---: | ---: |\n";
  for (const ErrorSummary& r : rows)
    out << "| " << r.name << " | " << r.count << " | " << percent(r.median_abs_relative_error)
        << " | " << percent(r.p90_abs_relative_error) << " |\n";
}

nlohmann::json errors_json(const std::vector<ErrorSummary>& rows) {
  nlohmann::json out = nlohmann::json::array();
  for (const ErrorSummary& r : rows)
    out.push_back({{"name", r.name},
                   {"count", r.count},
                   {"median_abs_relative_error", r.median_abs_relative_error},
                   {"p90_abs_relative_error", r.p90_abs_relative_error}});
  return out;
}

}  // namespace

std::optional<double> spearman_rank_correlation(std::span<const double> a,
                                                std::span<const double> b) {
  if (a.size() != b.size()) {
    throw_invalid("spearman_rank_correlation: " + std::to_string(a.size()) + " values against " +
                  std::to_string(b.size()));
  }
  if (a.size() < 2) return std::nullopt;
  const std::vector<double> ra = mean_ranks(a), rb = mean_ranks(b);
  const double mean = (static_cast<double>(a.size()) + 1.0) / 2.0;  // of ranks 1..n, ties or not
  double cov = 0.0, va = 0.0, vb = 0.0;
  for (std::size_t i = 0; i < ra.size(); ++i) {
    cov += (ra[i] - mean) * (rb[i] - mean);
    va += (ra[i] - mean) * (ra[i] - mean);
    vb += (rb[i] - mean) * (rb[i] - mean);
  }
  if (va == 0.0 || vb == 0.0) return std::nullopt;
  return cov / std::sqrt(va * vb);
}

double quantile(std::vector<double> values, double p) {
  if (values.empty()) throw_invalid("quantile of no values");
  if (!(p >= 0.0 && p <= 1.0))
    throw_invalid("quantile: p = " + std::to_string(p) + " is not in [0, 1]");
  std::sort(values.begin(), values.end());
  const double position = p * static_cast<double>(values.size() - 1);
  const auto below = static_cast<std::size_t>(std::floor(position));
  const std::size_t above = std::min(below + 1, values.size() - 1);
  const double weight = position - static_cast<double>(below);
  return values[below] + weight * (values[above] - values[below]);
}

AccuracyReport summarize_accuracy(std::span<const AccuracyPoint> points, double tolerance) {
  AccuracyReport report;
  report.tolerance = tolerance;
  std::map<std::string, std::vector<double>> by_family, by_format;
  std::vector<std::pair<std::string, Precision>> matrix_order;
  std::map<std::pair<std::string, Precision>, std::vector<const AccuracyPoint*>> by_matrix;
  for (const AccuracyPoint& p : points) {
    if (!(p.measured_ms > 0.0)) {
      throw_invalid("summarize_accuracy: " + p.matrix + " " + p.candidate + " measured " +
                    std::to_string(p.measured_ms) + " ms");
    }
    const double error = std::abs(p.predicted_ms - p.measured_ms) / p.measured_ms;
    by_family[p.family].push_back(error);
    by_format[p.format].push_back(error);
    const auto key = std::make_pair(p.matrix, p.precision);
    if (!by_matrix.contains(key)) matrix_order.push_back(key);
    by_matrix[key].push_back(&p);
  }
  for (auto& [name, errors] : by_family) report.families.push_back(summarize_errors(name, errors));
  for (auto& [name, errors] : by_format) report.formats.push_back(summarize_errors(name, errors));

  std::size_t within = 0;
  std::vector<double> spearmans;
  for (const auto& key : matrix_order) {
    const auto& group = by_matrix[key];
    MatrixAccuracy m;
    m.matrix = key.first;
    m.precision = key.second;
    m.candidates = group.size();
    std::vector<double> predicted, measured;
    const AccuracyPoint* top_predicted = group.front();
    const AccuracyPoint* top_measured = group.front();
    const auto ranked = [](const AccuracyPoint* p) {
      return p->ranked_ms > 0.0 ? p->ranked_ms : p->predicted_ms;
    };
    for (const AccuracyPoint* p : group) {
      predicted.push_back(p->predicted_ms);
      measured.push_back(p->measured_ms);
      if (ranked(p) < ranked(top_predicted)) top_predicted = p;
      if (p->measured_ms < top_measured->measured_ms) top_measured = p;
    }
    m.spearman = spearman_rank_correlation(predicted, measured);
    if (m.spearman) spearmans.push_back(*m.spearman);
    m.predicted_best = top_predicted->candidate;
    m.measured_best = top_measured->candidate;
    m.predicted_best_measured_ms = top_predicted->measured_ms;
    m.measured_best_ms = top_measured->measured_ms;
    m.top_within_tolerance =
        top_predicted->measured_ms <= (1.0 + tolerance) * top_measured->measured_ms;
    if (m.top_within_tolerance) ++within;
    report.matrices.push_back(std::move(m));
  }
  if (!report.matrices.empty())
    report.fraction_top_within_tolerance =
        static_cast<double>(within) / static_cast<double>(report.matrices.size());
  if (!spearmans.empty()) report.median_spearman = quantile(spearmans, 0.5);
  return report;
}

std::string accuracy_markdown(const AccuracyReport& report) {
  std::ostringstream out;
  const std::size_t within = static_cast<std::size_t>(std::lround(
      report.fraction_top_within_tolerance * static_cast<double>(report.matrices.size())));
  out << "Model's top candidate within " << fixed(100.0 * report.tolerance, 0)
      << " % of the measured best on " << within << " of " << report.matrices.size()
      << " matrix-precision pairs (" << percent(report.fraction_top_within_tolerance) << ")";
  if (report.median_spearman)
    out << "; median Spearman rank correlation " << fixed(*report.median_spearman, 2);
  out << ".\n\n";
  error_table(out, "family", report.families);
  out << "\n";
  error_table(out, "format", report.formats);
  out << "\n| matrix | precision | candidates | Spearman | model's top (measured ms) | measured "
         "best (ms) | within "
      << fixed(100.0 * report.tolerance, 0) << " % |\n"
      << "| --- | --- | ---: | ---: | --- | --- | --- |\n";
  for (const MatrixAccuracy& m : report.matrices) {
    out << "| " << m.matrix << " | " << to_string(m.precision) << " | " << m.candidates << " | "
        << (m.spearman ? fixed(*m.spearman, 2) : std::string("-")) << " | " << m.predicted_best
        << " (" << fixed(m.predicted_best_measured_ms, 4) << ") | " << m.measured_best << " ("
        << fixed(m.measured_best_ms, 4) << ") | " << (m.top_within_tolerance ? "yes" : "no")
        << " |\n";
  }
  return out.str();
}

nlohmann::json accuracy_to_json(const AccuracyReport& report) {
  nlohmann::json matrices = nlohmann::json::array();
  for (const MatrixAccuracy& m : report.matrices)
    matrices.push_back(
        {{"matrix", m.matrix},
         {"precision", std::string(to_string(m.precision))},
         {"candidates", m.candidates},
         {"spearman", m.spearman ? nlohmann::json(*m.spearman) : nlohmann::json(nullptr)},
         {"predicted_best", m.predicted_best},
         {"measured_best", m.measured_best},
         {"predicted_best_measured_ms", m.predicted_best_measured_ms},
         {"measured_best_ms", m.measured_best_ms},
         {"top_within_tolerance", m.top_within_tolerance}});
  return {{"tolerance", report.tolerance},
          {"fraction_top_within_tolerance", report.fraction_top_within_tolerance},
          {"median_spearman", report.median_spearman ? nlohmann::json(*report.median_spearman)
                                                     : nlohmann::json(nullptr)},
          {"families", errors_json(report.families)},
          {"formats", errors_json(report.formats)},
          {"matrices", matrices}};
}

}  // namespace spmvd
