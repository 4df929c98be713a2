#pragma once
// The tuner: every admissible candidate of every registered format is a point to consider;
// the fastest measured one becomes the Plan. With calibrated models (a ModelPredictor) every
// candidate is predicted and ranked, and only the best few predicted plus the cuSPARSE CSR
// ALG1 baseline are measured (paper 004 Sec. 6's model-driven auto-tuning, confirmed by
// measurement as ARCHITECTURE.md asks).

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "core/csr_matrix.hpp"
#include "core/matrix_features.hpp"
#include "core/plan.hpp"
#include "kernels/candidate.hpp"
#include "kernels/device.hpp"
#include "kernels/format_registry.hpp"
#include "models/model_predictor.hpp"

namespace spmvd {

// Bumped whenever the tuner could choose differently for the same inputs: it is part of the
// plan-cache key, so plans made by an older tuner are not reused.
// 2: with a model predictor only the measure_top_k best predicted candidates and the cuSPARSE
//    CSR ALG1 baseline are measured, so a plan may differ from version 1's exhaustive search.
// 3: each format's best predicted candidate is measured too (measure_best_of_each_format).
// 4: a format's parameters and own features are its own structs (FieldSet in the plan JSON):
//    plans of version 3 do not decode.
inline constexpr std::uint32_t kTunerVersion = 4;

struct TunerOptions {
  int warmup_runs = 3;
  int timed_runs = 20;                       // the median of these is a candidate's time
  std::size_t max_candidates_measured = 96;  // bound on build + measure work per matrix
  std::uint64_t memory_budget_bytes = 0;     // device bytes one matrix may occupy
  // With a model predictor: how many of the best predicted candidates are measured (the
  // baseline is measured besides them). Paper 004 trusts its model alone; the margin covers the
  // model's error. At least 1 is measured.
  std::size_t measure_top_k = 4;
  // With a model predictor: also measure each format's best predicted candidate, so that a
  // model that misjudges one format against another (docs/MODELS.md: across formats the models
  // rank far worse than within one) costs a measurement, not a slow plan.
  bool measure_best_of_each_format = true;
};

// Measures one candidate. The device timer builds and runs it; tests substitute fakes.
class CandidateTimer {
 public:
  virtual ~CandidateTimer() = default;
  // Median milliseconds of the timed runs. Throws Error when the candidate cannot be built
  // (e.g. resource_exhausted); the tuner then skips it.
  virtual double median_ms(const Candidate& candidate) = 0;
};

struct Measurement {
  Candidate candidate;
  double median_ms = 0.0;
};

// Admissible candidates of every registered format, in registry order. With part_predictor, a
// composed format chooses its partition against it (FormatRules::candidates_chosen_by);
// without, every format offers its model-free candidates.
std::vector<Candidate> enumerate_candidates(const FormatRegistry& registry,
                                            const MatrixFeatures& features,
                                            const DeviceInfo& device, Precision precision,
                                            std::uint64_t memory_budget_bytes,
                                            const PartTimePredictor* part_predictor = nullptr);

// Measures each candidate (in order, at most `limit`) and returns the fastest, plus how many
// were measured successfully. Throws Error(failed_precondition) when none could be measured.
struct Selection {
  Measurement best;
  std::uint32_t measured = 0;
};
Selection select_fastest(std::span<const Candidate> candidates, CandidateTimer& timer,
                         std::size_t limit);

// Predicts one candidate's time; the model predictor in production, fakes in tests.
class CandidatePredictor {
 public:
  virtual ~CandidatePredictor() = default;
  // nullopt when no model can predict it (not calibrated, cannot launch): it is ranked last.
  virtual std::optional<Prediction> predict(const Candidate& candidate) const = 0;
};

// A ModelPredictor for one matrix: each candidate's format family (FormatRules::model_family),
// its FormatRules::device_bytes as the bytes model's matrix bytes.
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

// Predicted candidates by ascending predicted time (ties keep their order), then the ones
// without a prediction in their order. O(n log n) plus n predictions.
std::vector<RankedCandidate> rank_candidates(std::span<const Candidate> candidates,
                                             const CandidatePredictor& predictor);

// What a model-ranked tuning measures: the first max(top_k, 1) ranked candidates that have a
// prediction, plus the baseline candidate wherever it is ranked, plus (best_of_each_format)
// the best-ranked candidate of every format. When no candidate has a prediction, the first
// `fallback_limit` in order (the unranked search). Ranked order.
std::vector<RankedCandidate> candidates_to_measure(std::span<const RankedCandidate> ranked,
                                                   std::size_t top_k, std::size_t fallback_limit,
                                                   bool best_of_each_format = false);

struct RankedSelection {
  Measurement best;
  std::uint32_t measured = 0;
  double predicted_ms = 0.0;  // the prediction for best; 0 when it had none
};

// Ranks, measures candidates_to_measure, and returns the fastest measured one: never slower
// than the baseline when the baseline is admissible and measurable. When none of those can be
// measured (all fail to build), measures further down the ranking, up to
// max_candidates_measured in all. Throws Error(failed_precondition) when none could be measured.
RankedSelection select_model_ranked(std::span<const Candidate> candidates,
                                    const CandidatePredictor& predictor, CandidateTimer& timer,
                                    const TunerOptions& options);

// Builds each candidate on `device` and times it with random x and y (seeded) and the
// device's clock: warm-up runs, then the median of timed runs.
class DeviceCandidateTimer final : public CandidateTimer {
 public:
  DeviceCandidateTimer(const FormatRegistry& registry, Device& device,
                       const CsrMatrix<double>& matrix, Precision precision, int warmup_runs,
                       int timed_runs);
  double median_ms(const Candidate& candidate) override;

 private:
  const FormatRegistry& registry_;
  Device& device_;
  const CsrMatrix<double>& matrix_;
  Precision precision_;
  int warmup_runs_;
  int timed_runs_;
  DeviceBuffer x_;
  DeviceBuffer y_;
};

// Enumerates, measures, and returns the plan for `matrix` on `device`. predictor nullptr:
// every admissible candidate is measured (up to max_candidates_measured). Otherwise
// select_model_ranked with its model set, and Plan.predicted_ms is the winner's prediction.
// Throws Error(invalid_argument) when the predictor's model set is for another precision or
// device, Error(resource_exhausted) when no format fits the budget, and what selection throws.
Plan tune_matrix(const FormatRegistry& registry, Device& device, const CsrMatrix<double>& matrix,
                 const MatrixFeatures& features, Precision precision, const TunerOptions& options,
                 const ModelPredictor* predictor = nullptr);

}  // namespace spmvd
