#pragma once
// The tuner: every admissible candidate of every registered format is a point to consider;
// the fastest measured one becomes the Plan. With calibrated models (a ModelPredictor) every
// candidate is predicted and ranked (paper 004 Sec. 6's model-driven auto-tuning), and a budget
// from the expected number of multiplies (the OSKI / MKL "expected calls" hint) decides how
// many of the best predicted are confirmed by measurement: one (model-only), k (verify-top-k)
// or all (exhaustive). docs/TUNER.md describes the modes, the budget and the cost accounting.

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/csr_matrix.hpp"
#include "core/matrix_features.hpp"
#include "core/plan.hpp"
#include "kernels/candidate.hpp"
#include "kernels/device.hpp"
#include "kernels/format_registry.hpp"
#include "kernels/spmv_operator.hpp"
#include "models/model_predictor.hpp"
#include "tuner/host_build_history.hpp"

namespace spmvd {

// Bumped whenever the tuner could choose differently for the same inputs: it is part of the
// plan-cache key, so plans made by an older tuner are not reused.
// 2: with a model predictor only the measure_top_k best predicted candidates and the cuSPARSE
//    CSR ALG1 baseline are measured, so a plan may differ from version 1's exhaustive search.
// 3: each format's best predicted candidate is measured too (measure_best_of_each_format).
// 4: a format's parameters and own features are its own structs (FieldSet in the plan JSON):
//    plans of version 3 do not decode.
// 5: a budget from the expected number of multiplies picks the mode (model-only, verify-top-k,
//    exhaustive) and k; plans record the mode and the tuning cost (docs/TUNER.md).
// 6: the budget estimates each candidate's build at the rate ranking charges it and passes over
//    a candidate that does not fit for cheaper ones behind it.
// 7: where the models rank the baseline first, the candidate after it is measured too (the
//    baseline does not use up model-only's one candidate).
// 8: a format built by a host algorithm whose build the expected multiplies cannot repay is
//    left out of the feature pass and not offered (MatrixFeatures::formats_left_out); a device
//    conversion is charged 0.1 ns a nonzero instead of 0.3 (its builds got cheaper).
// 9: cuda_bce's hopper tiling cuts long block-wide rows into pieces and runs the longest chains
//    first (bce_layout.hpp): a stored BCE plan's grid_size is another tile count.
// 10: verify-top-k passes over its top where the top's estimated cost overruns the budget
//    (the baseline guard behind it gives a plan), as choose_tuning counted k.
// 11: a build slower than estimated makes only its own format's later estimates pessimistic
//    (one ratio for every format passed over host builds after a device conversion's first
//    build had paid its kernels' loading).
inline constexpr std::uint32_t kTunerVersion = 11;

struct TunerOptions {
  // Runs of a verify-top-k or exhaustive measurement; the median of the timed runs is a
  // candidate's time. A model-only tuning measures its one candidate with one warm-up and one
  // timed run ("measure it once").
  int warmup_runs = 3;
  int timed_runs = 20;
  std::size_t max_candidates_measured = 96;  // bound on build + measure work per matrix
  std::uint64_t memory_budget_bytes = 0;     // device bytes one matrix may occupy
  // The tuning budget (docs/TUNER.md): at most this fraction of the expected multiply time,
  // expected_multiplies x the best candidate's predicted ms, goes to tuning.
  double budget_fraction = 0.10;
  // The expected_multiplies of a request that gives none (0): a Krylov solve of a few hundred
  // iterations, restarted a few times.
  std::uint64_t default_expected_multiplies = 1000;
  // nullopt: the budget picks the mode. A forced exhaustive search ignores the budget (it is the
  // oracle, for evaluation); a forced model-only or verify-top-k keeps to it.
  std::optional<TuneMode> mode = std::nullopt;
  // A build's cost per nonzero for a budget without per-candidate estimates (a selection given
  // no BuildCostEstimate; tune_matrix always gives one, from the two rates below): 7.5 ns sits
  // between the device and the host rates. Once a build is observed, the slowest observed rate
  // is used instead.
  double build_ns_per_nonzero_estimate = 7.5;
  // What ranking charges a candidate for its build, per nonzero, amortised over the expected
  // multiplies (rank_candidates), and what the budget expects a build to cost before it is
  // observed: the medians of H100 runs (2026-11-24, spmv-bench over
  // bench/suite_memory_bound.txt, fp64, from the CSR on the device; docs/BENCHMARKS.md
  // "Builds from the resident CSR"), 0.1 ns for the formats converted on the device
  // (FormatEntry::builds_on_device: ELL 0.05, SELL 0.35, cuSPARSE SELL 0.06, HYB 0.05, DIA
  // 0.06; the CSR and COO formats 0.00-0.01) and 28 ns for those built on the host (BCE 11, BRO-COO
  // 20, the split 22, the strip 23, BSR 34, BRO-ELL 39, BRO-HYB 56, EHYB 174), where the
  // calibration did not time the format's own (ModelSet::host_build_rates: the composed
  // formats). The serving build costs nothing. 0 turns the charge off.
  double device_build_ns_per_nonzero = 0.1;
  double host_build_ns_per_nonzero = 28.0;
  // From this many expected multiplies on, the feature pass is thorough (FeatureEffort: RCM
  // sized by computing it). A thorough pass costs ~0.3-0.5 us a nonzero more (Boost's RCM, the
  // permuted copy and its sizes; bench/feature_timing --thorough); the tuning may spend 10 % of
  // the expected multiplies, and an fp64 multiply moves at least 12 bytes a nonzero, ~4 ps at
  // an H100's 3.35 TB/s: the pass fits from 0.3 us / (0.1 x 4 ps) ~ 10^6 multiplies.
  std::uint64_t thorough_features_multiplies = 1'000'000;
};

// What the user expects and what was already spent, for one tuning.
struct TuneHints {
  std::uint64_t expected_multiplies = 0;  // 0: TunerOptions::default_expected_multiplies
  double features_ms = 0.0;               // the feature pass, made at upload
  // Spent before the selection (tune_matrix): enumerating the candidates, where composed
  // formats choose their partitions against the models (counted as ranking), and the timer's
  // vectors (counted as measurements).
  double enumeration_ms = 0.0;
  double timer_setup_ms = 0.0;
};

// How many warm-up and timed runs one measurement makes.
struct RunCounts {
  int warmup = 0;
  int timed = 1;
};

// One candidate's measurement and what it cost. median_ms is nullopt when the candidate could
// not be built or run here (failure says why); its cost still counts.
struct CandidateTiming {
  std::optional<double> median_ms;
  std::string failure;
  double build_ms = 0.0;
  double measure_ms = 0.0;
  // Time spent waiting for the device lock while other requests' multiplies ran: not part of
  // build_ms or measure_ms (it is the serving's time, not the tuning's).
  double waited_ms = 0.0;
};

// Builds and measures candidates. The device timer builds on the GPU; tests substitute fakes.
class CandidateTimer {
 public:
  virtual ~CandidateTimer() = default;
  virtual CandidateTiming measure(const Candidate& candidate, RunCounts runs) = 0;
  // The tuner calls this when the candidate just measured is the best so far: a timer that
  // builds keeps that build (and drops the one it kept before), so the winner is not rebuilt.
  virtual void keep_last() {}
};

struct Measurement {
  Candidate candidate;
  double median_ms = 0.0;
};

// One format's share of enumerate_candidates: nothing where it needs a GPU the device is not,
// where the feature pass left it out (MatrixFeatures::formats_left_out) or where it is not
// admissible; else its candidates (chosen against part_predictor where given and
// chooses_by_models allows) that fit the memory budget.
std::vector<Candidate> enumerate_format(const FormatEntry& entry, const MatrixFeatures& features,
                                        const DeviceInfo& device, Precision precision,
                                        std::uint64_t memory_budget_bytes,
                                        const PartTimePredictor* part_predictor,
                                        const FormatFilter& chooses_by_models);

// Admissible candidates of every registered format, in registry order. With part_predictor, a
// composed format chooses its partition against it (FormatRules::candidates_chosen_by) where
// chooses_by_models allows; otherwise it offers its model-free candidates. The formats are
// enumerated side by side (oneTBB): chooses_by_models is called from several threads at once.
std::vector<Candidate> enumerate_candidates(const FormatRegistry& registry,
                                            const MatrixFeatures& features,
                                            const DeviceInfo& device, Precision precision,
                                            std::uint64_t memory_budget_bytes,
                                            const PartTimePredictor* part_predictor = nullptr,
                                            const FormatFilter& chooses_by_models = {});

// Predicts one candidate's time; the model predictor in production, fakes in tests.
class CandidatePredictor {
 public:
  virtual ~CandidatePredictor() = default;
  // nullopt when no model can predict it (not calibrated, cannot launch): it is ranked last.
  // Called from several threads at once (rank_candidates predicts side by side).
  virtual std::optional<Prediction> predict(const Candidate& candidate) const = 0;
};

// A ModelPredictor for one matrix: each candidate's format family (FormatRules::model_family),
// its FormatRules::streamed_bytes as the bytes model's matrix bytes.
class ModelCandidatePredictor final : public CandidatePredictor {
 public:
  // Keeps references: all must outlive this object.
  ModelCandidatePredictor(const ModelPredictor& models, const FormatRegistry& registry,
                          const MatrixFeatures& features, const DeviceInfo& device,
                          Precision precision)
      : models_(models),
        registry_(registry),
        features_(features),
        device_(device),
        precision_(precision) {}
  std::optional<Prediction> predict(const Candidate& candidate) const override;

 private:
  const ModelPredictor& models_;
  const FormatRegistry& registry_;
  const MatrixFeatures& features_;
  const DeviceInfo& device_;
  Precision precision_;
};

// The reference every plan is measured against: cuSPARSE CSR with CUSPARSE_SPMV_CSR_ALG1.
bool is_baseline_candidate(const Candidate& candidate) noexcept;

struct RankedCandidate {
  Candidate candidate;
  std::optional<double> predicted_ms;
};

// A candidate's estimated build cost (TunerOptions' rates x nnz), which ranking amortises over
// the expected multiplies: a format that must be built on the host is measured first only
// where its predicted gain over those multiplies pays for its build.
class BuildCostEstimate {
 public:
  virtual ~BuildCostEstimate() = default;
  virtual double build_ms(const Candidate& candidate) const = 0;
};

// From the registry (FormatEntry::builds_on_device) and the options' rates; `serving` (may be
// null) is the candidate already built, which costs nothing.
class RegistryBuildCostEstimate final : public BuildCostEstimate {
 public:
  // measured: the calibration's build rates of this device (ModelSet::host_build_rates), which
  // a host-built format's estimate takes over options.host_build_ns_per_nonzero; with the
  // matrix's features (may be null) a candidate's estimate is also at least its device bytes
  // (FormatRules::device_bytes in `precision`) at its format's measured rate a byte; with
  // history (may be null), a host-built format's estimate is scaled by its factor there. Kept
  // by reference.
  RegistryBuildCostEstimate(const FormatRegistry& registry, const TunerOptions& options,
                            std::int64_t nnz, const Candidate* serving,
                            std::span<const HostBuildRate> measured = {},
                            const MatrixFeatures* features = nullptr,
                            Precision precision = Precision::fp64,
                            const HostBuildHistory* history = nullptr)
      : registry_(registry),
        options_(options),
        nnz_(nnz),
        serving_(serving),
        measured_(measured),
        features_(features),
        precision_(precision),
        history_(history) {}
  double build_ms(const Candidate& candidate) const override;
  // A build of any candidate of `entry`'s format by its nonzeros (nullptr: an unknown format,
  // host-built).
  double format_build_ms(const FormatEntry* entry) const;
  // build_ms without the history's factor: the estimate a HostBuildHistory ratio is taken
  // against, so that the factors do not compound.
  double calibrated_build_ms(const Candidate& candidate) const;

 private:
  double calibrated_format_build_ms(const FormatEntry* entry) const;
  // The history's factor for a host-built `entry`, 1 for a device-built or unknown one.
  double history_factor(const FormatEntry* entry) const;

  const FormatRegistry& registry_;
  const TunerOptions& options_;
  std::int64_t nnz_;
  const Candidate* serving_;
  std::span<const HostBuildRate> measured_;
  const MatrixFeatures* features_;
  Precision precision_;
  const HostBuildHistory* history_;
};

// The formats whose build the expected multiplies could repay: every format converted on the
// device, and one built by a host algorithm only where its estimated build (build_costs) is
// below the serving plan's predicted time over those multiplies, which is more than any plan
// could save, even one whose multiplies were free. Every format where the serving plan has no
// prediction. Keeps references to its arguments.
FormatFilter repayable_formats(const CandidatePredictor& predictor,
                               const RegistryBuildCostEstimate& build_costs,
                               const Candidate& serving, std::uint64_t expected_multiplies);
// The same for one matrix's features with the models and the options' build rates (scaled by
// build_history's factors where given), decided for every registered format at once: the
// filter owns its verdicts (a feature pass's computes_own, tuner/feature_extraction.hpp).
FormatFilter repayable_formats(const ModelPredictor& models, const FormatRegistry& registry,
                               const MatrixFeatures& features, const DeviceInfo& device,
                               Precision precision, const TunerOptions& options,
                               const Candidate& serving, std::uint64_t expected_multiplies,
                               const HostBuildHistory* build_history = nullptr);

// Predicted candidates by ascending predicted time plus, with build_costs, their build cost
// over expected_multiplies (ties keep their order), then the ones without a prediction in
// their order. O(n log n) plus n predictions, made side by side (oneTBB).
std::vector<RankedCandidate> rank_candidates(std::span<const Candidate> candidates,
                                             const CandidatePredictor& predictor,
                                             const BuildCostEstimate* build_costs = nullptr,
                                             std::uint64_t expected_multiplies = 1);

// The order in which a budgeted tuning measures ranked candidates: the best predicted first,
// then the baseline (so that a tuning that measures two is never slower than cuSPARSE CSR
// ALG1 where that is admissible), then the rest in ranked order.
std::vector<RankedCandidate> measurement_order(std::span<const RankedCandidate> ranked);

// The mode, k and budget of a tuning (docs/TUNER.md "Budget"). Pure: a function of the ranked
// candidates, the hint and the cost already spent.
struct TuningChoice {
  TuneMode mode = TuneMode::model_only;
  std::uint32_t k = 1;     // candidates to measure, from the front of measurement_order
  double budget_ms = 0.0;  // 0: unbudgeted (forced exhaustive)
};
// reference_ms is the best candidate's predicted time (or, without predictions, the first
// measured time); order is measurement_order's result. spent_ms is what the tuning has cost so
// far (the feature pass and the ranking). The k measurements of the choice, each estimated as a
// build (build_costs' estimate of the candidate, the rate ranking charges; without it nnz x
// build_ns_per_nonzero_estimate) plus its runs at the candidate's predicted time (reference_ms
// where it has none), fit budget_ms - spent_ms, taken in order and passing over any that would
// not fit; model-only's one measurement is the floor.
TuningChoice choose_tuning(std::span<const RankedCandidate> order, double reference_ms,
                           std::uint64_t expected_multiplies, double spent_ms, std::int64_t nnz,
                           const TunerOptions& options,
                           const BuildCostEstimate* build_costs = nullptr);

// One candidate this tuning measured: a sample for the measured refit (docs/TUNER.md
// "Samples").
struct MeasuredCandidate {
  Candidate candidate;
  std::optional<double> predicted_ms;  // nullopt where no model predicted it
  double measured_ms = 0.0;
  double build_ms = 0.0;  // what its build and its runs cost this tuning (the daemon's debug log)
  double runs_ms = 0.0;
};

struct BudgetedSelection {
  Measurement best;
  std::vector<MeasuredCandidate> measurements;  // every successful measurement, in order
  std::uint32_t measured = 0;  // successfully
  double predicted_ms = 0.0;   // the prediction for best; 0 when it had none
  TuningRecord record;         // mode, k, budget and cost (total included)
  double waited_ms = 0.0;      // device lock waits behind other requests, not in the cost
};

// Ranks (predictor may be null: candidates in the given order, unpredicted), chooses the mode
// and k from the budget, and measures down measurement_order: before each measurement after
// the first, the cost of the next is estimated from what was observed so far, and a candidate
// that would overrun the budget is passed over (a cheaper one behind it may still fit). Returns the fastest measured; ties go to the
// candidate measured first. A candidate that fails to build is skipped and the next one taken,
// within the budget; when none has been measured the search goes on (to
// max_candidates_measured) past the budget, since a plan is needed. Throws
// Error(failed_precondition) when none could be measured.
// `clock_ms` times the ranking (the host's steady clock, in ms, where empty): the tests give a
// frozen one, so that what their budgets admit does not depend on how loaded the machine is.
BudgetedSelection select_within_budget(std::span<const Candidate> candidates,
                                       const CandidatePredictor* predictor, CandidateTimer& timer,
                                       const TunerOptions& options, const TuneHints& hints,
                                       std::int64_t nnz,
                                       const BuildCostEstimate* build_costs = nullptr,
                                       const std::function<double()>& clock_ms = {});

// Builds each candidate on `device` and times it the way Engine::multiply runs a plan: for
// each run, x is written afresh (Multiply copies it in from the host; the timer copies it from
// a pristine device copy, which leaves x just as recently written in L2 without a PCIe
// transfer per run; the pristine x is filled on the device, Device::fill_hashed_uniform, so
// the set-up uploads nothing), then apply(x, y, 1, 0) is timed with the device's
// clock on the device's one stream (Multiply's common call; beta = 0 lets a library skip
// reading y, as it does for Multiply). The warm-up runs are not timed; the median of the timed
// runs is the candidate's time. The build of the best candidate is kept (keep_last) and handed
// over by take_kept. With device_mutex, each build and each run holds it, so multiplies
// interleave with a tuning at the granularity of one SpMV.
class DeviceCandidateTimer final : public CandidateTimer {
 public:
  // Builds from `source` (kernels/build_source.hpp): the matrix's CSR is uploaded once and
  // every candidate converts from it on the device.
  DeviceCandidateTimer(const FormatRegistry& registry, const BuildSource& source,
                       Precision precision, std::mutex* device_mutex = nullptr);
  CandidateTiming measure(const Candidate& candidate, RunCounts runs) override;
  void keep_last() override;
  // The kept build, if it is the build of `candidate`; null otherwise (also when the kept
  // candidate is the serving one: its build stays where it is).
  std::unique_ptr<SpmvOperator> take_kept(const Candidate& candidate);
  // A build that already exists (the plan serving the matrix while it is tuned): measuring
  // `candidate` runs `op` instead of building it again. Not owned; the caller keeps it alive
  // and serialises its use by device_mutex, as for every run.
  void reuse_build(const Candidate& candidate, SpmvOperator* op);
  // How long the constructor waited for the device lock (other requests' multiplies).
  double setup_waited_ms() const noexcept { return setup_waited_ms_; }

 private:
  const FormatRegistry& registry_;
  const BuildSource& source_;
  Device& device_;
  Precision precision_;
  std::mutex* device_mutex_;
  double setup_waited_ms_ = 0.0;
  // One allocation carved into x_pristine_, x_ and y_ (each at a multiple of
  // kDeviceAlignmentBytes): one cudaMalloc, not three.
  DeviceBuffer vectors_;
  void* x_pristine_ = nullptr;  // hashed x in the operator's precision, filled on the device once
  void* x_ = nullptr;
  void* y_ = nullptr;
  std::size_t x_bytes_ = 0;
  std::optional<Candidate> last_candidate_;
  std::unique_ptr<SpmvOperator> last_;  // null when the last measured was the reused build
  std::optional<Candidate> kept_candidate_;
  std::unique_ptr<SpmvOperator> kept_;
  std::optional<Candidate> reused_candidate_;
  SpmvOperator* reused_ = nullptr;
};

// The plan serving a matrix while it is tuned and its build, which the tuning measures in
// place of building that candidate again (the cuSPARSE ALG1 baseline, measured in every mode).
struct ServingBuild {
  Candidate candidate;
  SpmvOperator* op = nullptr;
};

// A tuned plan and the build that was measured for it (null when the tuning could not keep it,
// or when the plan is the serving build's, which stays in place).
struct TunedPlan {
  Plan plan;
  std::unique_ptr<SpmvOperator> op;
  std::vector<MeasuredCandidate> measurements;  // what the tuning measured, winner included
  double waited_ms = 0.0;  // device lock waits behind other requests, not in the plan's cost
};

// Enumerates, ranks (with predictor), measures within the budget (select_within_budget), and
// returns the plan for `matrix` on `device` with the winner's build. Plan.predicted_ms is the
// winner's prediction (0 without models); Plan.tuning records the mode, k, budget and cost;
// Plan.partition is the winner's build's partition (SpmvOperator::partition), if any.
// Candidates are built from `source` when given (the caller's, holding the matrix's CSR on the
// device already, e.g. the default plan's), else from one made for this tuning.
// Throws Error(invalid_argument) when the predictor's model set is for another precision or
// device, Error(resource_exhausted) when no format fits the budget, and what selection throws.
// With build_history (the daemon's; may be null), host builds are estimated at its factors, and
// each host-built format this tuning built records its slowest build over the calibrated
// estimate there (tuner/host_build_history.hpp).
TunedPlan tune_matrix(const FormatRegistry& registry, Device& device,
                      const CsrMatrix<double>& matrix, const MatrixFeatures& features,
                      Precision precision, const TunerOptions& options,
                      const ModelPredictor* predictor = nullptr, const TuneHints& hints = {},
                      std::mutex* device_mutex = nullptr, const BuildSource* source = nullptr,
                      const ServingBuild* serving = nullptr,
                      HostBuildHistory* build_history = nullptr);

}  // namespace spmvd
