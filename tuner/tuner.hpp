#pragma once
// The tuner: every admissible candidate of every registered format is a point to consider;
// the fastest measured one becomes the Plan. (Model-based ranking, so that only the few best
// predicted candidates are measured, is the calibrated-models issue's step on top of this.)

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "core/csr_matrix.hpp"
#include "core/matrix_features.hpp"
#include "core/plan.hpp"
#include "kernels/candidate.hpp"
#include "kernels/device.hpp"
#include "kernels/format_registry.hpp"

namespace spmvd {

// Bumped whenever the tuner could choose differently for the same inputs: it is part of the
// plan-cache key, so plans made by an older tuner are not reused.
inline constexpr std::uint32_t kTunerVersion = 1;

struct TunerOptions {
  int warmup_runs = 3;
  int timed_runs = 20;                        // the median of these is a candidate's time
  std::size_t max_candidates_measured = 96;   // bound on build + measure work per matrix
  std::uint64_t memory_budget_bytes = 0;      // device bytes one matrix may occupy
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

// Admissible candidates of every registered format, in registry order.
std::vector<Candidate> enumerate_candidates(const FormatRegistry& registry,
                                            const MatrixFeatures& features,
                                            const DeviceInfo& device, Precision precision,
                                            std::uint64_t memory_budget_bytes);

// Measures each candidate (in order, at most `limit`) and returns the fastest, plus how many
// were measured successfully. Throws Error(failed_precondition) when none could be measured.
struct Selection {
  Measurement best;
  std::uint32_t measured = 0;
};
Selection select_fastest(std::span<const Candidate> candidates, CandidateTimer& timer,
                         std::size_t limit);

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

// Enumerates, measures, and returns the plan for `matrix` on `device`.
Plan tune_matrix(const FormatRegistry& registry, Device& device, const CsrMatrix<double>& matrix,
                 const MatrixFeatures& features, Precision precision, const TunerOptions& options);

}  // namespace spmvd
