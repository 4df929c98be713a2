#include "tuner/tuner.hpp"

#include <algorithm>
#include <random>
#include <set>
#include <sstream>

#include "core/error.hpp"
#include "kernels/formats/cusparse_csr/cusparse_csr_rules.hpp"
#include "models/part_time_predictor.hpp"

namespace spmvd {

std::vector<Candidate> enumerate_candidates(const FormatRegistry& registry,
                                            const MatrixFeatures& features,
                                            const DeviceInfo& device, Precision precision,
                                            std::uint64_t memory_budget_bytes,
                                            const PartTimePredictor* part_predictor) {
  std::vector<Candidate> out;
  for (const FormatEntry& entry : registry.entries()) {
    const FormatRules& rules = *entry.rules;
    if (rules.needs_gpu() && !device.is_gpu) continue;
    if (!rules.admissible(features, device, precision, memory_budget_bytes)) continue;
    const std::vector<Candidate> space =
        part_predictor != nullptr ? rules.candidates_chosen_by(*part_predictor, features, device)
                                  : rules.candidates(features, device);
    for (const Candidate& c : space) {
      if (rules.device_bytes(features, precision, c) <= memory_budget_bytes) out.push_back(c);
    }
  }
  return out;
}

Selection select_fastest(std::span<const Candidate> candidates, CandidateTimer& timer,
                         std::size_t limit) {
  Selection selection;
  bool found = false;
  std::string last_failure;
  for (std::size_t i = 0; i < candidates.size() && i < limit; ++i) {
    double ms = 0.0;
    try {
      ms = timer.median_ms(candidates[i]);
    } catch (const Error& e) {
      // A candidate that cannot be built here (memory, shape) is not a plan; the others are.
      last_failure = e.what();
      continue;
    }
    ++selection.measured;
    if (!found || ms < selection.best.median_ms) {
      selection.best = {candidates[i], ms};
      found = true;
    }
  }
  if (!found) {
    throw Error(ErrorCode::failed_precondition,
                "no candidate could be measured (" + std::to_string(candidates.size()) +
                    " admissible" +
                    (last_failure.empty() ? "" : "; last failure: " + last_failure) + ")");
  }
  return selection;
}

std::optional<Prediction> ModelCandidatePredictor::predict(const Candidate& candidate) const {
  const FormatEntry* entry = registry_.find(candidate.format);
  if (entry == nullptr) return std::nullopt;
  try {
    return models_.predict_ms(*entry->rules, features_, candidate, device_,
                              entry->rules->device_bytes(features_, precision_, candidate));
  } catch (const Error&) {
    // Not calibrated, or the model says it cannot launch: rank it last rather than guess.
    return std::nullopt;
  }
}

bool is_baseline_candidate(const Candidate& candidate) noexcept {
  return candidate.format == kCusparseCsrFormatId &&
         CusparseCsrRules::params_of(candidate).library_algorithm == kCusparseSpmvCsrAlg1;
}

std::vector<RankedCandidate> rank_candidates(std::span<const Candidate> candidates,
                                             const CandidatePredictor& predictor) {
  std::vector<RankedCandidate> ranked;
  ranked.reserve(candidates.size());
  for (const Candidate& c : candidates) {
    const std::optional<Prediction> p = predictor.predict(c);
    ranked.push_back({c, p ? std::optional<double>(p->ms) : std::nullopt});
  }
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const RankedCandidate& a, const RankedCandidate& b) {
                     if (a.predicted_ms.has_value() != b.predicted_ms.has_value())
                       return a.predicted_ms.has_value();
                     return a.predicted_ms.has_value() && *a.predicted_ms < *b.predicted_ms;
                   });
  return ranked;
}

std::vector<RankedCandidate> candidates_to_measure(std::span<const RankedCandidate> ranked,
                                                   std::size_t top_k, std::size_t fallback_limit,
                                                   bool best_of_each_format) {
  const bool any_predicted = !ranked.empty() && ranked.front().predicted_ms.has_value();
  std::vector<RankedCandidate> out;
  if (!any_predicted) {
    for (std::size_t i = 0; i < ranked.size() && i < fallback_limit; ++i) out.push_back(ranked[i]);
    return out;
  }
  const std::size_t k = std::max<std::size_t>(top_k, 1);
  std::size_t taken = 0;
  std::set<FormatId> formats_seen;
  for (const RankedCandidate& r : ranked) {
    const bool top = r.predicted_ms.has_value() && taken < k;
    if (top) ++taken;
    const bool first_of_format = formats_seen.insert(r.candidate.format).second;
    if (top || is_baseline_candidate(r.candidate) || (best_of_each_format && first_of_format))
      out.push_back(r);
  }
  return out;
}

RankedSelection select_model_ranked(std::span<const Candidate> candidates,
                                    const CandidatePredictor& predictor, CandidateTimer& timer,
                                    const TunerOptions& options) {
  const std::vector<RankedCandidate> ranked = rank_candidates(candidates, predictor);
  const std::vector<RankedCandidate> chosen =
      candidates_to_measure(ranked, options.measure_top_k, options.max_candidates_measured,
                            options.measure_best_of_each_format);
  std::vector<Candidate> to_measure;
  to_measure.reserve(chosen.size());
  for (const RankedCandidate& r : chosen) to_measure.push_back(r.candidate);
  Selection selection;
  try {
    selection = select_fastest(to_measure, timer, to_measure.size());
  } catch (const Error& e) {
    if (e.code() != ErrorCode::failed_precondition) throw;
    // None of the chosen could be built (short of memory, say): go on down the ranking, as
    // far as the unranked search would have gone.
    std::vector<Candidate> rest;
    for (const RankedCandidate& r : ranked)
      if (std::find(to_measure.begin(), to_measure.end(), r.candidate) == to_measure.end())
        rest.push_back(r.candidate);
    const std::size_t limit = options.max_candidates_measured > to_measure.size()
                                  ? options.max_candidates_measured - to_measure.size()
                                  : 0;
    selection = select_fastest(rest, timer, limit);
  }
  RankedSelection out{.best = selection.best, .measured = selection.measured, .predicted_ms = 0.0};
  for (const RankedCandidate& r : ranked)
    if (r.candidate == selection.best.candidate) out.predicted_ms = r.predicted_ms.value_or(0.0);
  return out;
}

namespace {

template <typename Value>
std::vector<Value> random_vector(std::int64_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<Value> v(static_cast<std::size_t>(n));
  for (auto& e : v) e = static_cast<Value>(dist(rng));
  return v;
}

DeviceBuffer random_device_vector(Device& device, std::int64_t n, Precision precision,
                                  std::uint64_t seed) {
  if (precision == Precision::fp32) {
    const auto host = random_vector<float>(n, seed);
    return upload(device, host.data(), host.size());
  }
  const auto host = random_vector<double>(n, seed);
  return upload(device, host.data(), host.size());
}

}  // namespace

DeviceCandidateTimer::DeviceCandidateTimer(const FormatRegistry& registry, Device& device,
                                           const CsrMatrix<double>& matrix, Precision precision,
                                           int warmup_runs, int timed_runs)
    : registry_(registry),
      device_(device),
      matrix_(matrix),
      precision_(precision),
      warmup_runs_(warmup_runs),
      timed_runs_(std::max(1, timed_runs)),
      x_(random_device_vector(device, matrix.cols, precision, 0x5eed)),
      y_(random_device_vector(device, matrix.rows, precision, 0x5eed + 1)) {}

double DeviceCandidateTimer::median_ms(const Candidate& candidate) {
  const FormatEntry* entry = registry_.find(candidate.format);
  if (entry == nullptr)
    throw Error(ErrorCode::internal,
                "candidate names unregistered format id " + std::to_string(candidate.format.value));
  auto op = entry->build(matrix_, precision_, candidate, device_);
  // beta = 1 reads y as a solver's update does; the values stay finite (|y| grows slowly).
  const auto run = [&] { op->apply(x_.data(), y_.data(), 1.0, 1.0); };
  for (int i = 0; i < warmup_runs_; ++i) run();
  device_.synchronize();
  std::vector<double> times(static_cast<std::size_t>(timed_runs_));
  for (auto& t : times) t = device_.time_ms(run);
  std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
  return times[times.size() / 2];
}

Plan tune_matrix(const FormatRegistry& registry, Device& device, const CsrMatrix<double>& matrix,
                 const MatrixFeatures& features, Precision precision, const TunerOptions& options,
                 const ModelPredictor* predictor) {
  if (predictor != nullptr) {
    const ModelSet& set = predictor->model_set();
    if (set.precision != precision)
      throw_invalid("tune_matrix: the model set is for " + std::string(to_string(set.precision)) +
                    ", the matrix is tuned for " + std::string(to_string(precision)));
    if (set.device_signature != device.info().signature())
      throw_invalid("tune_matrix: the model set was calibrated on \"" + set.device_signature +
                    "\", tuning runs on \"" + device.info().signature() + "\"");
  }
  std::optional<ModelPartTimePredictor> part_predictor;
  if (predictor != nullptr) part_predictor.emplace(*predictor, registry, device.info());
  const auto candidates = enumerate_candidates(registry, features, device.info(), precision,
                                               options.memory_budget_bytes,
                                               part_predictor ? &*part_predictor : nullptr);
  if (candidates.empty()) {
    throw Error(ErrorCode::resource_exhausted,
                "no format can hold this matrix (" + std::to_string(features.rows) + " x " +
                    std::to_string(features.cols) + ", " + std::to_string(features.nnz) +
                    " nonzeros) within the memory budget of " +
                    std::to_string(options.memory_budget_bytes) + " bytes");
  }
  DeviceCandidateTimer timer(registry, device, matrix, precision, options.warmup_runs,
                             options.timed_runs);
  Selection selection;
  double predicted_ms = 0.0;
  if (predictor != nullptr) {
    const ModelCandidatePredictor models(*predictor, registry, features, device.info(), precision);
    const RankedSelection ranked = select_model_ranked(candidates, models, timer, options);
    selection = {ranked.best, ranked.measured};
    predicted_ms = ranked.predicted_ms;
  } else {
    selection = select_fastest(candidates, timer, options.max_candidates_measured);
  }

  Plan plan;
  plan.format = selection.best.candidate.format;
  plan.format_name = std::string(registry.find(plan.format)->rules->name());
  plan.params = selection.best.candidate.params;
  plan.launch = selection.best.candidate.launch;
  plan.precision = precision;
  plan.predicted_ms = predicted_ms;
  plan.measured_ms = selection.best.median_ms;
  plan.candidates_measured = selection.measured;
  plan.tuner_version = kTunerVersion;
  plan.features = features;
  return plan;
}

}  // namespace spmvd
