#include "models/measured_refit.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "models/fit_json.hpp"
#include "models/record_presentation.hpp"

namespace spmvd {

void to_json(nlohmann::json& j, const MeasuredRefitFactor& v) {
  j = {{"format", v.format}, {"factor", v.factor}, {"sample_count", v.sample_count}};
}

void from_json(const nlohmann::json& j, MeasuredRefitFactor& v) {
  j.at("format").get_to(v.format);
  j.at("factor").get_to(v.factor);
  j.at("sample_count").get_to(v.sample_count);
  if (!(v.factor > 0.0) || !std::isfinite(v.factor))
    throw std::invalid_argument("measured_refit factor " + std::to_string(v.factor) +
                                " of format " + std::to_string(v.format.value) +
                                " is not a positive number");
}

double measured_refit_factor(std::span<const MeasuredRefitFactor> factors, FormatId format) {
  for (const MeasuredRefitFactor& f : factors)
    if (f.format == format) return f.factor;
  return 1.0;
}

namespace {

// The middle value (the mean of the two middle ones for an even count); 0 for none.
double median(std::vector<double> values) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

double relative_error(double predicted_ms, double measured_ms) {
  return std::abs(predicted_ms - measured_ms) / measured_ms;
}

// Per format with at least min_samples samples: the median of measured / base. The median of
// the ratios is the median of their logarithms mapped back: it minimises the summed absolute
// log error, i.e. it treats a model 2x slow and 2x fast alike and is not moved by the odd
// measurement a busy GPU spoiled (docs/MODELS.md "measured_refit").
std::vector<MeasuredRefitFactor> fit_factors(std::span<const RefitSample* const> samples,
                                             std::span<const MeasuredRefitFactor> current,
                                             std::size_t min_samples) {
  std::map<FormatId, std::vector<double>> ratios;
  for (const RefitSample* s : samples) ratios[s->format].push_back(s->measured_ms / s->base_ms);
  std::map<FormatId, MeasuredRefitFactor> out;
  for (const MeasuredRefitFactor& f : current) out[f.format] = f;
  for (auto& [format, r] : ratios) {
    if (r.size() < std::max<std::size_t>(min_samples, 1)) continue;
    out[format] = MeasuredRefitFactor{.format = format,
                                      .factor = median(r),
                                      .sample_count = static_cast<std::uint32_t>(r.size())};
  }
  std::vector<MeasuredRefitFactor> factors;
  for (auto& [format, f] : out) factors.push_back(f);
  return factors;
}

struct Evaluation {
  std::map<FormatId, std::vector<double>> errors;
  std::vector<double> all_errors;
  std::size_t top1_tunings = 0;
  std::size_t top1_agreeing = 0;
};

// samples are sorted, so each tuning's samples are adjacent.
Evaluation evaluate(std::span<const RefitSample* const> samples,
                    std::span<const MeasuredRefitFactor> factors) {
  Evaluation e;
  const auto predicted = [&](const RefitSample& s) {
    return s.base_ms * measured_refit_factor(factors, s.format);
  };
  for (const RefitSample* s : samples) {
    const double err = relative_error(predicted(*s), s->measured_ms);
    e.errors[s->format].push_back(err);
    e.all_errors.push_back(err);
  }
  for (std::size_t begin = 0; begin < samples.size();) {
    std::size_t end = begin + 1;
    while (end < samples.size() && samples[end]->tuning == samples[begin]->tuning &&
           samples[end]->tuned_ms == samples[begin]->tuned_ms)
      ++end;
    if (end - begin >= 2) {
      std::size_t fastest_measured = begin;
      std::size_t fastest_predicted = begin;
      for (std::size_t i = begin + 1; i < end; ++i) {
        if (samples[i]->measured_ms < samples[fastest_measured]->measured_ms) fastest_measured = i;
        if (predicted(*samples[i]) < predicted(*samples[fastest_predicted])) fastest_predicted = i;
      }
      ++e.top1_tunings;
      // The same measured time counts as agreeing: either candidate was the right choice.
      if (samples[fastest_predicted]->measured_ms == samples[fastest_measured]->measured_ms)
        ++e.top1_agreeing;
    }
    begin = end;
  }
  return e;
}

double share(std::size_t part, std::size_t whole) {
  return whole == 0 ? 0.0 : static_cast<double>(part) / static_cast<double>(whole);
}

}  // namespace

RefitReport refit_measured(std::span<const RefitSample> samples,
                           std::span<const MeasuredRefitFactor> current,
                           const RefitOptions& options) {
  std::vector<const RefitSample*> usable;
  for (const RefitSample& s : samples)
    if (s.base_ms > 0.0 && s.measured_ms > 0.0 && std::isfinite(s.base_ms) &&
        std::isfinite(s.measured_ms))
      usable.push_back(&s);
  // A total order on the samples' contents: the same multiset of samples gives the same split.
  std::sort(usable.begin(), usable.end(), [](const RefitSample* a, const RefitSample* b) {
    return std::tie(a->tuned_ms, a->tuning, a->format, a->measured_ms, a->base_ms) <
           std::tie(b->tuned_ms, b->tuning, b->format, b->measured_ms, b->base_ms);
  });

  RefitReport report;
  report.samples = usable.size();
  // The older half of the tunings fits, the newer half is held out: what the refit will meet
  // next is newer matrices, and a tuning's candidates stay on one side (top-1 needs them all).
  std::vector<std::size_t> tuning_starts;
  for (std::size_t i = 0; i < usable.size(); ++i)
    if (i == 0 || usable[i]->tuning != usable[i - 1]->tuning ||
        usable[i]->tuned_ms != usable[i - 1]->tuned_ms)
      tuning_starts.push_back(i);
  const std::size_t split =
      tuning_starts.size() < 2 ? usable.size() : tuning_starts[tuning_starts.size() / 2];
  const std::span<const RefitSample* const> all(usable);
  const std::span<const RefitSample* const> fit = all.first(split);
  const std::span<const RefitSample* const> heldout = all.subspan(split);
  report.fit_samples = fit.size();
  report.heldout_samples = heldout.size();

  const std::vector<MeasuredRefitFactor> fitted =
      fit_factors(fit, current, options.min_samples_per_format);
  const Evaluation before = evaluate(heldout, current);
  const Evaluation after = evaluate(heldout, fitted);
  for (const auto& [format, errors] : before.errors) {
    report.formats.push_back(
        FormatRefitAccuracy{.format = format,
                            .heldout_samples = errors.size(),
                            .median_relative_error_before = median(errors),
                            .median_relative_error_after = median(after.errors.at(format)),
                            .factor_before = measured_refit_factor(current, format),
                            .factor_after = measured_refit_factor(fitted, format)});
  }
  report.median_relative_error_before = median(before.all_errors);
  report.median_relative_error_after = median(after.all_errors);
  report.top1_tunings = before.top1_tunings;
  report.top1_agreement_before = share(before.top1_agreeing, before.top1_tunings);
  report.top1_agreement_after = share(after.top1_agreeing, after.top1_tunings);

  std::map<FormatId, std::size_t> fit_counts;
  for (const RefitSample* s : fit) ++fit_counts[s->format];
  const bool fitted_any = std::any_of(fit_counts.begin(), fit_counts.end(), [&](const auto& c) {
    return c.second >= std::max<std::size_t>(options.min_samples_per_format, 1);
  });
  if (tuning_starts.size() < 2 || heldout.empty()) {
    report.refusal = "too few samples to hold any out: " + std::to_string(usable.size()) +
                     " usable samples from " + std::to_string(tuning_starts.size()) +
                     " tunings (at least 2 tunings needed)";
  } else if (!fitted_any) {
    report.refusal = "no format has " + std::to_string(options.min_samples_per_format) +
                     " samples in the older half (" + std::to_string(fit.size()) +
                     " samples) to fit a factor from";
  } else if (report.median_relative_error_after > report.median_relative_error_before) {
    report.refusal = "the refit makes the held-out median relative error worse (" +
                     std::to_string(report.median_relative_error_before) + " -> " +
                     std::to_string(report.median_relative_error_after) + ")";
  } else if (after.top1_agreeing < before.top1_agreeing) {
    report.refusal = "the refit makes the held-out top-1 agreement worse (" +
                     std::to_string(before.top1_agreeing) + " -> " +
                     std::to_string(after.top1_agreeing) + " of " +
                     std::to_string(before.top1_tunings) + " tunings)";
  }
  report.accepted = report.refusal.empty();
  // What is installed is exactly what was validated. Factors refitted on all samples would have
  // seen the held-out half, so the next refit's "before" would be measured on its own training
  // data and refuse every honest competitor; with these, refitting the same samples again
  // reproduces the same factors (accepted, no change), and new samples move the split forward.
  if (report.accepted) report.factors = fitted;
  return report;
}

nlohmann::json refit_report_json(const RefitReport& report) {
  nlohmann::json formats = nlohmann::json::array();
  for (const FormatRefitAccuracy& f : report.formats)
    formats.push_back({{"format", f.format.value},
                       {"heldout_samples", f.heldout_samples},
                       {"median_relative_error_before", f.median_relative_error_before},
                       {"median_relative_error_after", f.median_relative_error_after},
                       {"factor_before", f.factor_before},
                       {"factor_after", f.factor_after}});
  return {{"samples", report.samples},
          {"fit_samples", report.fit_samples},
          {"heldout_samples", report.heldout_samples},
          {"formats", std::move(formats)},
          {"median_relative_error_before", report.median_relative_error_before},
          {"median_relative_error_after", report.median_relative_error_after},
          {"top1_tunings", report.top1_tunings},
          {"top1_agreement_before", report.top1_agreement_before},
          {"top1_agreement_after", report.top1_agreement_after},
          {"accepted", report.accepted},
          {"refusal", report.refusal},
          {"factors", report.factors}};
}

FamilyTable measured_refit_table(std::span<const MeasuredRefitFactor> factors) {
  FamilyTable table{.name = "measured_refit",
                    .title = "per format, measured / predicted from the tuner's samples",
                    .headers = {"format", "factor", "samples"}};
  for (const MeasuredRefitFactor& f : factors)
    table.rows.push_back(
        {format_name_cell(f.format), number_cell(f.factor, "%.3f"), count_cell(f.sample_count)});
  return table;
}

}  // namespace spmvd
