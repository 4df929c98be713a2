#pragma once
// One matrix's benchmark sweep: every registry format admissible on the device, every
// candidate (optionally thinned), each built, checked against reference_spmv and timed.
//
// Per precision: x is random in [-1, 1) and y is poisoned with 0xFF bytes (NaN) before the
// checked apply, y = 1*A*x + 0*y, which is compared row by row with reference_spmv within the
// bound of bench/result_check.hpp. A candidate that fails is reported FAILED and not timed.
// Timed applies rotate over several x/y pairs when the matrix is smaller than L2, so that x
// and y are not served from L2 by the previous repetition; with rotate_vectors false they use
// one pair, which then stays in L2 as in the daemon (x was just copied in, y just written) and
// in the calibration samples.

#include <cstdint>
#include <functional>
#include <optional>
#include <map>
#include <string>
#include <vector>

#include "bench/copy_bandwidth.hpp"
#include "core/csr_matrix.hpp"
#include "core/matrix_features.hpp"
#include "core/precision.hpp"
#include "kernels/candidate.hpp"
#include "kernels/format_parts.hpp"
#include "kernels/format_rules.hpp"
#include "kernels/device.hpp"

namespace spmvd {

struct SweepOptions {
  std::vector<Precision> precisions{Precision::fp64};
  int reps = 30;   // timed applies per candidate
  // Candidates whose median after `reps` is under short_ms get short_reps applies in all: a
  // few-microsecond kernel decides rankings on cache-resident matrices, where 10 % is a few
  // hundred nanoseconds, and the extra applies cost milliseconds.
  int short_reps = 101;
  double short_ms = 0.05;
  int warmup = 5;  // untimed applies before them
  std::vector<std::string> formats;        // registry names to run; empty: all
  std::size_t max_candidates_per_format = 0;  // 0: every candidate; else evenly spaced ones
  std::uint64_t memory_budget_bytes = 0;   // passed to FormatRules::admissible
  std::uint64_t x_seed = 20240601;         // seed of the random x
  int max_buffer_pairs = 64;               // cap on the rotated x/y pairs
  bool rotate_vectors = true;              // false: one x/y pair (hot in L2 when they fit)
  // With a calibration (spmv-bench --calibration): composed formats also run the candidates
  // they choose against these part predictors (FormatRules::candidates_chosen_by), as the
  // tuner would, beyond their model-free ones. Not owned; null: model-free candidates only.
  const PartTimePredictor* fp32_parts = nullptr;
  const PartTimePredictor* fp64_parts = nullptr;
};

enum class CandidateStatus { ok, failed, build_error, run_error };
const char* to_string(CandidateStatus status) noexcept;  // "ok", "FAILED", "build_error", ...

struct CandidateResult {
  Precision precision = Precision::fp64;
  std::string format;
  Candidate candidate;
  CandidateStatus status = CandidateStatus::ok;
  std::string message;           // why it failed, empty when ok
  double max_error_ratio = 0.0;  // max over rows |y - y_ref| / bound (<= 1 passes)
  int timed_reps = 0;            // applies behind median/min/p90 (reps, or short_reps)
  double build_ms = 0.0;
  double median_ms = 0.0, min_ms = 0.0, p90_ms = 0.0;
  int buffer_pairs = 0;
  std::uint64_t device_bytes = 0;     // the operator's own footprint
  std::uint64_t csr_model_bytes = 0;  // bench/byte_model.hpp, the common count
  double gflops = 0.0;                // 2 * nnz / median
  double effective_gb_per_s = 0.0;    // csr_model_bytes / median
  double fraction_of_copy_bandwidth = 0.0;
  // cuSPARSE CSR ALG1 (preprocessed) time / this time, same precision, same run; and the same
  // against the fastest cuSPARSE variant. Absent when that baseline did not run.
  std::optional<double> speedup_vs_cusparse_alg1;
  std::optional<double> speedup_vs_best_cusparse;
  bool correct() const noexcept { return status == CandidateStatus::ok; }
};

struct SweepResult {
  std::vector<CandidateResult> candidates;
  // "fp64 cuda_ell" for formats skipped on this device; "fp64 cuda_bce <params>: N device bytes
  // over the memory budget of B" for a candidate whose device bytes exceed it.
  std::vector<std::string> inadmissible;
  // Per precision swept ("fp64", "fp32"): the CSR's upload to the device that every candidate's
  // build then starts from (kernels/build_source.hpp), synchronised, in ms. A candidate's
  // build_ms excludes it: it is what the tuner pays per candidate once the matrix is resident.
  std::map<std::string, double> csr_upload_ms;
};

// Called after each candidate (for progress output).
using SweepProgress = std::function<void(const CandidateResult&)>;

// Throws Error(invalid_argument) for a name in options.formats that the registry lacks.
SweepResult sweep_matrix(const CsrMatrix<double>& matrix, const MatrixFeatures& features,
                         Device& device, const CopyBandwidth& copy, const SweepOptions& options,
                         const SweepProgress& progress = {});

// The candidates whose FormatRules::device_bytes fit memory_budget_bytes (all where it is 0),
// in order; each one that does not is named in `refused` with its bytes. The tuner drops them
// the same way (tuner/tuner.cpp enumerate_format): a composed format's partition chosen
// against the models can store far more than the format's other candidates, and its layout is
// built on the host first.
std::vector<Candidate> candidates_within_memory_budget(const FormatRules& rules,
                                                       const MatrixFeatures& features,
                                                       Precision precision,
                                                       std::vector<Candidate> candidates,
                                                       std::uint64_t memory_budget_bytes,
                                                       std::vector<std::string>& refused);

// Evenly spaced picks (first and last included) of at most `limit` from `count`; all when
// limit is 0 or >= count.
std::vector<std::size_t> spaced_picks(std::size_t count, std::size_t limit);

}  // namespace spmvd
