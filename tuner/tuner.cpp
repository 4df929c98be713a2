#include "tuner/tuner.hpp"

#include <tbb/parallel_for.h>

#include <algorithm>
#include <chrono>
#include <iterator>
#include <map>
#include <set>
#include <sstream>

#include "core/error.hpp"
#include "kernels/device_lock.hpp"
#include "kernels/formats/cusparse_csr/cusparse_csr_rules.hpp"
#include "models/part_time_predictor.hpp"

namespace spmvd {

std::vector<Candidate> enumerate_format(const FormatEntry& entry, const MatrixFeatures& features,
                                        const DeviceInfo& device, Precision precision,
                                        std::uint64_t memory_budget_bytes,
                                        const PartTimePredictor* part_predictor,
                                        const FormatFilter& chooses_by_models) {
  const FormatRules& rules = *entry.rules;
  if (rules.needs_gpu() && !device.is_gpu) return {};
  if (features.left_out(rules.name())) return {};
  if (!rules.admissible(features, device, precision, memory_budget_bytes)) return {};
  const bool by_models =
      part_predictor != nullptr && (!chooses_by_models || chooses_by_models(entry));
  std::vector<Candidate> space = by_models
                                     ? rules.candidates_chosen_by(*part_predictor, features, device)
                                     : rules.candidates(features, device);
  std::erase_if(space, [&](const Candidate& c) {
    return rules.device_bytes(features, precision, c) > memory_budget_bytes;
  });
  return space;
}

std::vector<Candidate> enumerate_candidates(const FormatRegistry& registry,
                                            const MatrixFeatures& features,
                                            const DeviceInfo& device, Precision precision,
                                            std::uint64_t memory_budget_bytes,
                                            const PartTimePredictor* part_predictor,
                                            const FormatFilter& chooses_by_models) {
  // The formats' spaces are independent (rules are stateless, the predictors thread-safe):
  // enumerated side by side, then concatenated in registry order. A composed format choosing
  // against the models takes most of the time (bench/ranking-timing).
  const std::span<const FormatEntry> entries = registry.entries();
  std::vector<std::vector<Candidate>> spaces(entries.size());
  tbb::parallel_for(std::size_t{0}, entries.size(), [&](std::size_t i) {
    spaces[i] = enumerate_format(entries[i], features, device, precision, memory_budget_bytes,
                                 part_predictor, chooses_by_models);
  });
  std::vector<Candidate> out;
  for (std::vector<Candidate>& space : spaces)
    out.insert(out.end(), std::make_move_iterator(space.begin()),
               std::make_move_iterator(space.end()));
  return out;
}

std::optional<Prediction> ModelCandidatePredictor::predict(const Candidate& candidate) const {
  const FormatEntry* entry = registry_.find(candidate.format);
  if (entry == nullptr) return std::nullopt;
  try {
    return models_.predict_ms(*entry->rules, features_, candidate, device_,
                              entry->rules->streamed_bytes(features_, precision_, candidate));
  } catch (const Error&) {
    // Not calibrated, or the model says it cannot launch: rank it last rather than guess.
    return std::nullopt;
  }
}

bool is_baseline_candidate(const Candidate& candidate) noexcept {
  return candidate.format == kCusparseCsrFormatId &&
         CusparseCsrRules::params_of(candidate).library_algorithm == kCusparseSpmvCsrAlg1;
}

double RegistryBuildCostEstimate::build_ms(const Candidate& candidate) const {
  return calibrated_build_ms(candidate) * history_factor(registry_.find(candidate.format));
}

double RegistryBuildCostEstimate::format_build_ms(const FormatEntry* entry) const {
  return calibrated_format_build_ms(entry) * history_factor(entry);
}

double RegistryBuildCostEstimate::history_factor(const FormatEntry* entry) const {
  if (history_ == nullptr || entry == nullptr || entry->builds_on_device) return 1.0;
  return history_->factor(entry->rules->id());
}

double RegistryBuildCostEstimate::calibrated_build_ms(const Candidate& candidate) const {
  if (serving_ != nullptr && *serving_ == candidate) return 0.0;
  const FormatEntry* entry = registry_.find(candidate.format);
  const double by_nonzeros = calibrated_format_build_ms(entry);
  // A host build of this candidate's own layout: its measured rate a device byte too, so that a
  // layout padded far beyond its nonzeros is priced by its bytes (BCE, docs/TUNER.md).
  if (features_ == nullptr || entry == nullptr || entry->builds_on_device || by_nonzeros <= 0.0)
    return by_nonzeros;
  const HostBuildRate* rate = host_build_rate(measured_, entry->rules->id());
  if (rate == nullptr) return by_nonzeros;
  return host_build_ms(*rate, nnz_, entry->rules->device_bytes(*features_, precision_, candidate));
}

double RegistryBuildCostEstimate::calibrated_format_build_ms(const FormatEntry* entry) const {
  double ns = options_.host_build_ns_per_nonzero;
  if (entry != nullptr && entry->builds_on_device) {
    ns = options_.device_build_ns_per_nonzero;
  } else if (entry != nullptr && ns > 0.0) {  // 0: the charge is off
    if (const HostBuildRate* measured = host_build_rate(measured_, entry->rules->id()))
      ns = measured->ns_per_nonzero;
  }
  return ns * static_cast<double>(nnz_) * 1e-6;
}

FormatFilter repayable_formats(const CandidatePredictor& predictor,
                               const RegistryBuildCostEstimate& build_costs,
                               const Candidate& serving, std::uint64_t expected_multiplies) {
  const std::optional<Prediction> p = predictor.predict(serving);
  if (!p) return {};
  const double repayable_ms = p->ms * static_cast<double>(std::max<std::uint64_t>(expected_multiplies, 1));
  return [&build_costs, repayable_ms](const FormatEntry& entry) {
    return entry.builds_on_device || build_costs.format_build_ms(&entry) < repayable_ms;
  };
}

FormatFilter repayable_formats(const ModelPredictor& models, const FormatRegistry& registry,
                               const MatrixFeatures& features, const DeviceInfo& device,
                               Precision precision, const TunerOptions& options,
                               const Candidate& serving, std::uint64_t expected_multiplies,
                               const HostBuildHistory* build_history) {
  const ModelCandidatePredictor predictor(models, registry, features, device, precision);
  const RegistryBuildCostEstimate build_costs(registry, options, features.nnz, &serving,
                                              models.model_set().host_build_rates, nullptr,
                                              precision, build_history);
  const FormatFilter repayable =
      repayable_formats(predictor, build_costs, serving, expected_multiplies);
  if (!repayable) return {};
  std::set<const FormatEntry*> accepted;
  for (const FormatEntry& entry : registry.entries())
    if (repayable(entry)) accepted.insert(&entry);
  return [accepted = std::move(accepted)](const FormatEntry& entry) {
    return accepted.contains(&entry);
  };
}

std::vector<RankedCandidate> rank_candidates(std::span<const Candidate> candidates,
                                             const CandidatePredictor& predictor,
                                             const BuildCostEstimate* build_costs,
                                             std::uint64_t expected_multiplies) {
  struct Keyed {
    RankedCandidate ranked;
    double key = 0.0;  // predicted ms + build ms / expected multiplies
  };
  const double multiplies = static_cast<double>(std::max<std::uint64_t>(expected_multiplies, 1));
  // Each prediction is independent (a composed format's sums those of its parts): predicted
  // side by side, in the candidates' order.
  std::vector<std::optional<Prediction>> predictions(candidates.size());
  tbb::parallel_for(std::size_t{0}, candidates.size(),
                    [&](std::size_t i) { predictions[i] = predictor.predict(candidates[i]); });
  std::vector<Keyed> keyed;
  keyed.reserve(candidates.size());
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const Candidate& c = candidates[i];
    const std::optional<Prediction>& p = predictions[i];
    Keyed k{{c, p ? std::optional<double>(p->ms) : std::nullopt}, 0.0};
    if (p) k.key = p->ms + (build_costs ? build_costs->build_ms(c) / multiplies : 0.0);
    keyed.push_back(std::move(k));
  }
  std::stable_sort(keyed.begin(), keyed.end(), [](const Keyed& a, const Keyed& b) {
    if (a.ranked.predicted_ms.has_value() != b.ranked.predicted_ms.has_value())
      return a.ranked.predicted_ms.has_value();
    return a.ranked.predicted_ms.has_value() && a.key < b.key;
  });
  std::vector<RankedCandidate> ranked;
  ranked.reserve(keyed.size());
  for (Keyed& k : keyed) ranked.push_back(std::move(k.ranked));
  return ranked;
}

std::vector<RankedCandidate> measurement_order(std::span<const RankedCandidate> ranked) {
  std::vector<RankedCandidate> order;
  order.reserve(ranked.size());
  if (ranked.empty()) return order;
  std::vector<bool> placed(ranked.size(), false);
  const auto place = [&](std::size_t i) {
    order.push_back(ranked[i]);
    placed[i] = true;
  };
  place(0);
  for (std::size_t i = 1; i < ranked.size(); ++i)
    if (is_baseline_candidate(ranked[i].candidate)) place(i);
  // Then each other format's best ranked: across formats the models rank far worse than within
  // one (docs/MODELS.md), so a budget that allows a few measurements spends them across formats.
  std::set<FormatId> formats{ranked[0].candidate.format};
  for (std::size_t i = 1; i < ranked.size(); ++i)
    if (!placed[i] && formats.insert(ranked[i].candidate.format).second) place(i);
  for (std::size_t i = 1; i < ranked.size(); ++i)
    if (!placed[i]) place(i);
  return order;
}

namespace {

RunCounts runs_for(TuneMode mode, const TunerOptions& options) {
  if (mode == TuneMode::model_only) return {.warmup = 1, .timed = 1};
  return {.warmup = std::max(0, options.warmup_runs), .timed = std::max(1, options.timed_runs)};
}

// What one measurement is expected to cost: a build plus its runs at the candidate's time.
double estimated_measurement_ms(const RankedCandidate& candidate, double reference_ms,
                                double build_ms, RunCounts runs) {
  const double run_ms = candidate.predicted_ms.value_or(reference_ms);
  return build_ms + static_cast<double>(runs.warmup + runs.timed) * run_ms;
}

double estimated_build_ms(std::int64_t nnz, const TunerOptions& options) {
  return static_cast<double>(nnz) * options.build_ns_per_nonzero_estimate * 1e-6;
}

double elapsed_ms(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - since)
      .count();
}

}  // namespace

TuningChoice choose_tuning(std::span<const RankedCandidate> order, double reference_ms,
                           std::uint64_t expected_multiplies, double spent_ms, std::int64_t nnz,
                           const TunerOptions& options, const BuildCostEstimate* build_costs) {
  const std::size_t n = std::min(order.size(), options.max_candidates_measured);
  const auto count = static_cast<std::uint32_t>(std::max<std::size_t>(n, 1));
  if (options.mode == TuneMode::exhaustive)
    return {.mode = TuneMode::exhaustive, .k = count, .budget_ms = 0.0};
  const std::uint64_t multiplies =
      expected_multiplies ? expected_multiplies : options.default_expected_multiplies;
  const double budget_ms =
      options.budget_fraction * static_cast<double>(multiplies) * std::max(reference_ms, 0.0);
  // How many of the order fit the budget with full verification runs, in order, passing over
  // one that does not fit (a host build) for cheaper ones behind it.
  const RunCounts full = runs_for(TuneMode::verify_top_k, options);
  double planned_ms = spent_ms;
  std::uint32_t fit = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double build_ms = build_costs ? build_costs->build_ms(order[i].candidate)
                                        : estimated_build_ms(nnz, options);
    const double next_ms = estimated_measurement_ms(order[i], reference_ms, build_ms, full);
    if (planned_ms + next_ms > budget_ms) continue;
    planned_ms += next_ms;
    ++fit;
  }
  if (options.mode == TuneMode::model_only)
    return {.mode = TuneMode::model_only, .k = 1, .budget_ms = budget_ms};
  if (options.mode == TuneMode::verify_top_k)
    return {.mode = TuneMode::verify_top_k, .k = std::max<std::uint32_t>(fit, 1),
            .budget_ms = budget_ms};
  if (fit >= n && n > 1) return {.mode = TuneMode::exhaustive, .k = fit, .budget_ms = budget_ms};
  if (fit >= 2) return {.mode = TuneMode::verify_top_k, .k = fit, .budget_ms = budget_ms};
  return {.mode = TuneMode::model_only, .k = 1, .budget_ms = budget_ms};
}

BudgetedSelection select_within_budget(std::span<const Candidate> candidates,
                                       const CandidatePredictor* predictor, CandidateTimer& timer,
                                       const TunerOptions& options, const TuneHints& hints,
                                       std::int64_t nnz,
                                       const BuildCostEstimate* build_costs,
                                       const std::function<double()>& clock_ms) {
  BudgetedSelection out;
  TuningCost& cost = out.record.cost;
  cost.features_ms = hints.features_ms;
  cost.measurements_ms = hints.timer_setup_ms;
  out.record.expected_multiplies =
      hints.expected_multiplies ? hints.expected_multiplies : options.default_expected_multiplies;

  const auto now_ms = [&clock_ms] {
    return clock_ms ? clock_ms()
                    : std::chrono::duration<double, std::milli>(
                          std::chrono::steady_clock::now().time_since_epoch())
                          .count();
  };
  const double ranking_start_ms = now_ms();
  std::vector<RankedCandidate> ranked;
  if (predictor != nullptr) {
    ranked = rank_candidates(candidates, *predictor, build_costs,
                             out.record.expected_multiplies);
  } else {
    for (const Candidate& c : candidates) ranked.push_back({c, std::nullopt});
  }
  const std::vector<RankedCandidate> order = measurement_order(ranked);
  cost.ranking_ms = hints.enumeration_ms + (now_ms() - ranking_start_ms);
  const auto spent = [&] {
    return cost.features_ms + cost.ranking_ms + cost.builds_ms + cost.measurements_ms;
  };

  bool found = false;
  std::string last_failure;
  std::size_t builds = 0;
  double slowest_build_ms_per_nnz = 0.0;
  // Per format, the worst observed / estimated build time (at least 1), with build_costs: a
  // format whose build proves slower than estimated makes the estimates of its next candidates
  // pessimistic by as much. Per format, because the builds of two formats are two algorithms: a
  // device conversion's first build pays its kernels' lazy loading (cuda_sell on
  // bayer10-x32-renumbered: 6.6 ms, estimated 0.3), which says nothing of a host algorithm's
  // rate; one ratio for all priced BCE's 40-ms host build at ~0.8 s there and passed over it
  // in a 324-ms budget, where BCE was the oracle's best (H100, 2026-11-25, tuner version 10).
  std::map<FormatId, double> worst_build_ratio;
  const auto build_ratio = [&](FormatId format) {
    const auto it = worst_build_ratio.find(format);
    return it == worst_build_ratio.end() ? 1.0 : it->second;
  };
  // The worst measured / predicted ratio seen (at least 1): a model that proves optimistic
  // makes the estimate of the next measurement pessimistic by as much.
  double worst_ratio = 1.0;
  // Measures order[i]; returns whether it could be measured.
  const auto measure = [&](std::size_t i, RunCounts runs) {
    const CandidateTiming timing = timer.measure(order[i].candidate, runs);
    cost.builds_ms += timing.build_ms;
    cost.measurements_ms += timing.measure_ms;
    out.waited_ms += timing.waited_ms;
    ++builds;
    if (nnz > 0)
      slowest_build_ms_per_nnz =
          std::max(slowest_build_ms_per_nnz, timing.build_ms / static_cast<double>(nnz));
    if (build_costs) {
      const double estimate = build_costs->build_ms(order[i].candidate);
      const FormatId format = order[i].candidate.format;
      if (estimate > 0.0)
        worst_build_ratio[format] = std::max(build_ratio(format), timing.build_ms / estimate);
    }
    if (!timing.median_ms) {
      last_failure = timing.failure;
      return false;
    }
    ++out.measured;
    out.measurements.push_back({order[i].candidate, order[i].predicted_ms, *timing.median_ms,
                                timing.build_ms, timing.measure_ms});
    if (order[i].predicted_ms && *order[i].predicted_ms > 0.0)
      worst_ratio = std::max(worst_ratio, *timing.median_ms / *order[i].predicted_ms);
    // Strictly faster: a tie keeps the one measured first (the better ranked).
    if (!found || *timing.median_ms < out.best.median_ms) {
      out.best = {order[i].candidate, *timing.median_ms};
      out.predicted_ms = order[i].predicted_ms.value_or(0.0);
      timer.keep_last();
      found = true;
    }
    return true;
  };

  const std::size_t limit = std::min(order.size(), options.max_candidates_measured);
  // Without predictions the expected multiply time is unknown until one candidate is measured:
  // the first in order is measured as model-only would, and its time is the reference.
  std::size_t next = 0;
  std::optional<double> reference_ms;
  if (!order.empty() && order.front().predicted_ms) reference_ms = *order.front().predicted_ms;
  TuningChoice choice;
  if (!reference_ms && options.mode != TuneMode::exhaustive) {
    const RunCounts probe = runs_for(TuneMode::model_only, options);
    while (!found && next < limit) measure(next++, probe);
    if (found) reference_ms = out.best.median_ms;
  }
  choice = choose_tuning(order, reference_ms.value_or(0.0), hints.expected_multiplies, spent(),
                         nnz, options, build_costs);
  out.record.mode = choice.mode;
  out.record.k = choice.k;
  out.record.budget_ms = choice.budget_ms;
  const RunCounts runs = runs_for(choice.mode, options);
  const bool budgeted = choice.budget_ms > 0.0 || options.mode != TuneMode::exhaustive;

  std::size_t taken = out.measured;  // the probe counts as one of k
  // Where the models rank the baseline first, it is measured as the guard it always is (below)
  // and the k candidates are the ones after it, the first of them as unconditionally as a top
  // that is not the baseline: a tuning never keeps ALG1 without having timed one other
  // candidate (H100, 2026-11-24, model version 21: ALG1 predicted 0.0194 ms and COO 0.0195 on
  // Groebner-x16, where COO measured 9 % faster; docs/TUNER.md).
  const bool baseline_first = !order.empty() && is_baseline_candidate(order.front().candidate);
  std::size_t k = choice.k + (baseline_first ? 1 : 0);
  for (; next < limit; ++next) {
    // The baseline (cuSPARSE CSR ALG1, which serves the matrix while it is tuned; second in
    // measurement_order) is measured whatever the mode and budget: the models rank across
    // formats far worse than within one, and a plan slower than cuSPARSE is what a user must
    // never get (H100, 2026-11-23, memory-bound suite: the models' top was 1.1-2.6x slower than
    // ALG1 on 6 of 10 matrices; docs/TUNER.md). It costs a cuSPARSE preprocess and a few runs.
    const bool baseline_guard = next == 1 && is_baseline_candidate(order[next].candidate);
    if (found && taken >= k && !baseline_guard) break;
    const bool first_after_baseline = baseline_first && taken == 1;
    // verify-top-k passes over its top too where the top would overrun the budget and the
    // baseline guard follows it (a plan is measured either way), as choose_tuning counted k:
    // measured first unconditionally, EHYB's METIS on ct2010-x16-renumbered (estimated 0.94 s,
    // taken 2.0 s) ran a tuning to 4.7x its 0.46-s budget (H100, 2026-11-25, docs/TUNER.md).
    // Its slot of k goes to the next that fits. model-only still measures its top whatever it
    // costs: that is its floor.
    const bool top_before_guard = !found && next == 0 && choice.mode == TuneMode::verify_top_k &&
                                  limit > 1 && is_baseline_candidate(order[1].candidate);
    if ((found || top_before_guard) && budgeted && !baseline_guard && !first_after_baseline) {
      // The next measurement's cost from what this tuning has observed: its build as the
      // estimate ranking charged it (device or host rate) scaled by its format's worst observed /
      // estimated build so far, or without estimates the slowest build rate seen; its runs at
      // its predicted time. One that would overrun the budget is passed over for the next.
      const double build_ms =
          build_costs ? build_costs->build_ms(order[next].candidate) *
                            build_ratio(order[next].candidate.format)
          : builds    ? slowest_build_ms_per_nnz * static_cast<double>(nnz)
                      : estimated_build_ms(nnz, options);
      RankedCandidate scaled = order[next];
      if (scaled.predicted_ms) *scaled.predicted_ms *= worst_ratio;
      const double next_ms = estimated_measurement_ms(scaled, out.best.median_ms, build_ms, runs);
      if (spent() + next_ms > choice.budget_ms) {
        if (top_before_guard) ++k;
        continue;
      }
    }
    if (measure(next, runs)) ++taken;
  }
  if (!found) {
    throw Error(ErrorCode::failed_precondition,
                "no candidate could be measured (" + std::to_string(candidates.size()) +
                    " admissible" +
                    (last_failure.empty() ? "" : "; last failure: " + last_failure) + ")");
  }
  cost.total_ms = spent();
  return out;
}

namespace {

// The timed runs' x: hashed_uniform of the index (kernels/hashed_uniform.hpp) with this seed.
constexpr std::uint64_t kTimerXSeed = 0x5eed;

// The device lock for one build or one run; adds how long taking it (and, for a build, taking
// it back after its host phase: kernels/device_lock.hpp) waited to waited_ms.
class TimedDeviceLock final : public DeviceLockHolder {
 public:
  TimedDeviceLock(std::mutex* mutex, double& waited_ms) : waited_ms_(waited_ms) {
    if (mutex == nullptr) return;
    lock_ = std::unique_lock(*mutex, std::defer_lock);
    reacquire();
  }
  TimedDeviceLock(const TimedDeviceLock&) = delete;
  TimedDeviceLock& operator=(const TimedDeviceLock&) = delete;
  ~TimedDeviceLock() = default;

  void release() override {
    if (lock_.owns_lock()) lock_.unlock();
  }
  void reacquire() override {
    if (lock_.mutex() == nullptr || lock_.owns_lock()) return;
    const auto start = std::chrono::steady_clock::now();
    lock_.lock();
    waited_ms_ += elapsed_ms(start);
  }

 private:
  double& waited_ms_;
  std::unique_lock<std::mutex> lock_;
};

}  // namespace

DeviceCandidateTimer::DeviceCandidateTimer(const FormatRegistry& registry,
                                           const BuildSource& source, Precision precision,
                                           std::mutex* device_mutex)
    : registry_(registry),
      source_(source),
      device_(source.device()),
      precision_(precision),
      device_mutex_(device_mutex) {
  const TimedDeviceLock lock(device_mutex_, setup_waited_ms_);
  const std::size_t vb = value_bytes(precision);
  const auto cols = static_cast<std::size_t>(source.host().cols);
  const auto rows = static_cast<std::size_t>(source.host().rows);
  x_bytes_ = cols * vb;
  const std::size_t x_region_bytes = round_up_to_device_alignment(x_bytes_);
  vectors_ = DeviceBuffer(device_, 2 * x_region_bytes + rows * vb);
  x_pristine_ = vectors_.data_at(0);
  x_ = vectors_.data_at(x_region_bytes);
  y_ = vectors_.data_at(2 * x_region_bytes);
  device_.fill_hashed_uniform(x_pristine_, cols, precision, kTimerXSeed);
  device_.synchronize();  // the fill is the set-up's cost, not the first build's
}

CandidateTiming DeviceCandidateTimer::measure(const Candidate& candidate, RunCounts runs) {
  const FormatEntry* entry = registry_.find(candidate.format);
  if (entry == nullptr)
    throw Error(ErrorCode::internal,
                "candidate names unregistered format id " + std::to_string(candidate.format.value));
  // The device lock is taken per build and per run, not per candidate, so that a multiply of
  // another matrix waits for one SpMV of the tuning at most, not for a whole measurement. The
  // time spent waiting for it is the serving's, not the tuning's: it is kept apart.
  CandidateTiming timing;
  last_.reset();  // the previous candidate's build, unless kept: its memory is needed now
  last_candidate_.reset();
  SpmvOperator* op = nullptr;
  if (reused_ != nullptr && *reused_candidate_ == candidate) {
    op = reused_;  // built already: no build cost
  } else {
    const auto build_start = std::chrono::steady_clock::now();
    const auto build_cost = [&] { return elapsed_ms(build_start) - timing.waited_ms; };
    try {
      TimedDeviceLock lock(device_mutex_, timing.waited_ms);
      const HeldForBuild held(lock);  // its host phase runs without it
      last_ = entry->build(source_, precision_, candidate);
      device_.synchronize();  // a build's asynchronous copies and kernels are part of its cost
    } catch (const Error& e) {
      timing.build_ms = build_cost();
      timing.failure = e.what();
      last_.reset();
      return timing;
    }
    timing.build_ms = build_cost();
    op = last_.get();
  }
  last_candidate_ = candidate;

  const auto measure_start = std::chrono::steady_clock::now();
  const double waited_before_runs = timing.waited_ms;
  // x written afresh before each run, as Multiply's copy-in does (the class comment says why
  // from the device).
  const auto refresh_x = [&] {
    device_.copy_on_device(x_, x_pristine_, x_bytes_);
  };
  const auto run = [&] { op->apply(x_, y_, 1.0, 0.0); };
  for (int i = 0; i < runs.warmup; ++i) {
    const TimedDeviceLock lock(device_mutex_, timing.waited_ms);
    refresh_x();
    run();
    device_.synchronize();
  }
  std::vector<double> times(static_cast<std::size_t>(std::max(1, runs.timed)));
  for (auto& t : times) {
    const TimedDeviceLock lock(device_mutex_, timing.waited_ms);
    refresh_x();
    t = device_.time_ms(run);
  }
  std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
  timing.median_ms = times[times.size() / 2];
  timing.measure_ms =
      elapsed_ms(measure_start) - (timing.waited_ms - waited_before_runs);
  return timing;
}

void DeviceCandidateTimer::keep_last() {
  if (!last_candidate_) return;
  kept_ = std::move(last_);  // null for the reused build
  kept_candidate_ = std::move(last_candidate_);
  last_candidate_.reset();
}

void DeviceCandidateTimer::reuse_build(const Candidate& candidate, SpmvOperator* op) {
  reused_candidate_ = candidate;
  reused_ = op;
}

std::unique_ptr<SpmvOperator> DeviceCandidateTimer::take_kept(const Candidate& candidate) {
  if (!kept_candidate_ || !(*kept_candidate_ == candidate)) return nullptr;
  kept_candidate_.reset();
  return std::move(kept_);
}

namespace {

// Per host-built format the tuning built, its slowest build over the calibrated estimate
// (HostBuildHistory says why the slowest).
void record_host_builds(const FormatRegistry& registry,
                        const RegistryBuildCostEstimate& build_costs,
                        std::span<const MeasuredCandidate> measurements,
                        HostBuildHistory& history) {
  std::map<FormatId, double> slowest;
  for (const MeasuredCandidate& c : measurements) {
    const FormatEntry* entry = registry.find(c.candidate.format);
    if (entry == nullptr || entry->builds_on_device) continue;
    const double estimate = build_costs.calibrated_build_ms(c.candidate);
    if (!(estimate > 0.0)) continue;
    double& ratio = slowest[c.candidate.format];
    ratio = std::max(ratio, c.build_ms / estimate);
  }
  for (const auto& [format, ratio] : slowest) history.record(format, ratio);
}

}  // namespace

TunedPlan tune_matrix(const FormatRegistry& registry, Device& device,
                      const CsrMatrix<double>& matrix, const MatrixFeatures& features,
                      Precision precision, const TunerOptions& options,
                      const ModelPredictor* predictor, const TuneHints& hints,
                      std::mutex* device_mutex, const BuildSource* source,
                      const ServingBuild* serving, HostBuildHistory* build_history) {
  if (predictor != nullptr) {
    const ModelSet& set = predictor->model_set();
    if (set.precision != precision)
      throw_invalid("tune_matrix: the model set is for " + std::string(to_string(set.precision)) +
                    ", the matrix is tuned for " + std::string(to_string(precision)));
    if (set.device_signature != device.info().signature())
      throw_invalid("tune_matrix: the model set was calibrated on \"" + set.device_signature +
                    "\", tuning runs on \"" + device.info().signature() + "\"");
  }
  TuneHints spent = hints;
  const auto enumeration_start = std::chrono::steady_clock::now();
  std::optional<ModelPartTimePredictor> part_predictor;
  std::optional<ModelCandidatePredictor> models;
  if (predictor != nullptr) {
    part_predictor.emplace(*predictor, registry, device.info());
    models.emplace(*predictor, registry, features, device.info(), precision);
  }
  const RegistryBuildCostEstimate build_costs(
      registry, options, features.nnz, serving != nullptr ? &serving->candidate : nullptr,
      predictor != nullptr ? std::span<const HostBuildRate>(predictor->model_set().host_build_rates)
                           : std::span<const HostBuildRate>{},
      &features, precision, build_history);
  // A composed format chooses its partition against the models (BCE's OPA prices thousands of
  // blocks) only where its build could be repaid. (Where the feature pass was given the same
  // hint, such formats were left out of it and are not offered at all.)
  FormatFilter repayable;
  if (models && serving != nullptr)
    repayable = repayable_formats(*models, build_costs, serving->candidate,
                                  hints.expected_multiplies ? hints.expected_multiplies
                                                            : options.default_expected_multiplies);
  const auto candidates = enumerate_candidates(registry, features, device.info(), precision,
                                               options.memory_budget_bytes,
                                               part_predictor ? &*part_predictor : nullptr,
                                               repayable);
  spent.enumeration_ms = elapsed_ms(enumeration_start);
  if (candidates.empty()) {
    throw Error(ErrorCode::resource_exhausted,
                "no format can hold this matrix (" + std::to_string(features.rows) + " x " +
                    std::to_string(features.cols) + ", " + std::to_string(features.nnz) +
                    " nonzeros) within the memory budget of " +
                    std::to_string(options.memory_budget_bytes) + " bytes");
  }
  std::optional<BuildSource> own_source;
  if (source == nullptr) source = &own_source.emplace(matrix, device);
  const auto timer_start = std::chrono::steady_clock::now();
  DeviceCandidateTimer timer(registry, *source, precision, device_mutex);
  spent.timer_setup_ms = elapsed_ms(timer_start) - timer.setup_waited_ms();
  if (serving != nullptr && serving->op != nullptr) timer.reuse_build(serving->candidate, serving->op);
  const BudgetedSelection selection = select_within_budget(
      candidates, models ? &*models : nullptr, timer, options, spent, features.nnz, &build_costs);

  TunedPlan out;
  Plan& plan = out.plan;
  plan.format = selection.best.candidate.format;
  plan.format_name = std::string(registry.find(plan.format)->rules->name());
  plan.params = selection.best.candidate.params;
  plan.launch = selection.best.candidate.launch;
  plan.precision = precision;
  plan.predicted_ms = selection.predicted_ms;
  plan.measured_ms = selection.best.median_ms;
  plan.candidates_measured = selection.measured;
  plan.tuner_version = kTunerVersion;
  plan.features = features;
  plan.tuning = selection.record;
  out.op = timer.take_kept(selection.best.candidate);
  // The partition the winner's build computed (or was handed) goes with the plan, so that a
  // cache hit loads it instead of computing it again (issue 16); the serving build's where the
  // serving plan won.
  if (out.op)
    plan.partition = out.op->partition();
  else if (serving != nullptr && serving->op != nullptr &&
           serving->candidate == selection.best.candidate)
    plan.partition = serving->op->partition();
  out.measurements = selection.measurements;
  out.waited_ms = timer.setup_waited_ms() + selection.waited_ms;
  if (build_history != nullptr) record_host_builds(registry, build_costs, out.measurements,
                                                   *build_history);
  return out;
}

}  // namespace spmvd
