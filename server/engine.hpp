#pragma once
// The daemon's engine: the resident-matrix registry, tuning through the plan cache, and
// multiplication. No gRPC here: service methods decode, call this, encode.
//
// A matrix is servable as soon as it is added: it is built in the default format (cuSPARSE CSR
// ALG1 on a GPU, the CPU CSR format on the CPU) and its tuning is queued for the engine's
// tuning thread, which swaps the tuned plan and its build in when ready (docs/TUNER.md
// "Background tuning").
//
// Thread safety: every method may be called from any gRPC thread. Each matrix has its own
// lock, held by a multiply and by the swap of its plan, so a multiply runs wholly on one plan;
// device work is serialised on the one device stream by the device lock, which the tuning
// thread takes per candidate, so multiplies interleave with a tuning.

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <future>
#include <thread>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <vector>

#include "core/csr_matrix.hpp"
#include "core/fingerprint.hpp"
#include "core/plan.hpp"
#include "db/plan_store.hpp"
#include "kernels/device.hpp"
#include "kernels/format_registry.hpp"
#include "models/calibration.hpp"
#include "models/device_calibration.hpp"
#include "models/measured_refit.hpp"
#include "models/model_predictor.hpp"
#include "server/memory_trimmer.hpp"
#include "tuner/tuner.hpp"

namespace spmvd {

struct EngineConfig {
  std::uint64_t memory_budget_bytes = 0;  // device bytes for all resident matrices
  TunerOptions tuner;
  CalibrationOptions calibration;
  // After a release, freed host memory goes back to the OS at most this often (0: never).
  std::uint64_t trim_memory_interval_ms = 1000;
  // Measured samples kept per (device, precision, format) for the refit (docs/TUNER.md).
  std::size_t samples_per_format = kDefaultSamplesPerFormat;
  // The daemon runs refit_models this often on its own (0: only on `spmvctl model refit`).
  std::uint32_t refit_interval_s = 0;
};

// The measured refit of one precision (Engine::refit_models).
struct PrecisionRefit {
  Precision precision = Precision::fp64;
  std::size_t stored_samples = 0;   // this device's samples of this precision in the store
  std::size_t skipped_samples = 0;  // not re-predictable: unknown or composed format, uncalibrated
  RefitReport report;
  bool installed = false;  // accepted, stored and in use
};


struct MatrixSummary {
  std::string handle;
  std::string name;
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::int64_t nnz = 0;
  Precision precision = Precision::fp64;
  Fingerprint fingerprint;
};

// What the engine has done since it started (monotonic) and holds now: the source of
// `spmvctl stats` and of the Prometheus metrics.
struct EngineCounters {
  std::uint64_t plan_cache_hits = 0;
  std::uint64_t plan_cache_misses = 0;  // each one a tuning
  double tuning_ms_total = 0.0;         // wall time of those tunings
  // Sum of tuning_ms / the chosen plan's measured multiply ms: multiplies a tuning cost.
  double tuning_spmv_equivalents_total = 0.0;
  std::uint64_t matrices_released = 0;
  std::uint64_t memory_trims = 0;  // malloc_trim runs after releases
};

struct ResidentStats {
  MatrixSummary summary;
  std::uint64_t device_bytes = 0;  // counted against the memory budget
  std::string format;              // the plan serving it (the default format until tuned)
};

struct EngineStats {
  std::vector<ResidentStats> matrices;
  std::uint64_t resident_device_bytes = 0;
  std::uint64_t memory_budget_bytes = 0;
  EngineCounters counters;
  bool calibrated = false;
  bool calibrating = false;
};

struct TuneOutcome {
  Plan plan;
  bool cache_hit = false;
  double tune_ms = 0.0;  // wall time of the tuning (lookup and build on a hit)
};

struct MultiplyOutcome {
  std::vector<std::vector<double>> y;
  double device_ms = 0.0;
  Plan plan;
  bool default_plan = false;  // the untuned default served it: tuning has not finished
};

// The plan a matrix is served with before tuning: cuSPARSE CSR ALG1 where the device is a GPU
// and it is admissible, else the CPU CSR format; Plan.candidates_measured 0 marks it untuned.
// Throws Error(failed_precondition) when neither is registered and admissible.
Plan default_plan(const FormatRegistry& registry, const MatrixFeatures& features,
                  const DeviceInfo& device, Precision precision);

class Engine {
 public:
  Engine(EngineConfig config, Device& device, PlanStore& plans, const FormatRegistry& registry);
  ~Engine();

  // Takes a validated matrix, makes it resident in the default format and queues its tuning;
  // returns its new handle. expected_multiplies sets the tuning budget (0: the configured
  // default). Throws Error(resource_exhausted) when it would not fit the memory budget.
  MatrixSummary add_matrix(CsrMatrix<double> matrix, Precision precision, std::string name,
                           std::uint64_t expected_multiplies = 0);
  // Waits for the matrix's tuning (the plan cache, or a tuning in the background thread) and
  // returns its plan. A new tuning is queued when force (the stored plan is dropped first), when
  // the matrix has none pending or done (a failed one), or when expected_multiplies exceeds the
  // hint the plan was tuned with and the plan's search was not exhaustive (a larger budget can
  // only widen the search; the cache is bypassed, and the store keeps the faster plan).
  TuneOutcome tune(const std::string& handle, bool force, std::uint64_t expected_multiplies = 0);
  // y_i = alpha*A*x_i + beta*y_i. ys is empty when beta == 0, else one per x. Never waits for
  // tuning: the plan serving the matrix now (the default until the tuned one is swapped in).
  MultiplyOutcome multiply(const std::string& handle, double alpha, double beta,
                           const std::vector<std::vector<double>>& xs,
                           const std::vector<std::vector<double>>& ys);
  void release(const std::string& handle);
  std::vector<MatrixSummary> list() const;

  // Uses the calibration stored for this device and model version; when there is none and
  // calibrate_when_missing, calibrates now and stores it. Returns whether models are in use
  // (without, the tuner measures every admissible candidate).
  bool load_calibration(bool calibrate_when_missing, const CalibrationProgressFn& on_progress);
  // Runs the calibration micro-benchmarks (device held throughout), stores and uses the result.
  void calibrate(const CalibrationProgressFn& on_progress);
  // Refits the measured_refit correction of each precision from this device's stored samples
  // (models/measured_refit.hpp); where a precision's refit is accepted, its factors replace
  // the ones in use and the calibration is stored and installed (one new calibration for both).
  // Throws Error(failed_precondition) when no calibration is in use. One refit at a time.
  std::vector<PrecisionRefit> refit_models();
  // The calibration in use as JSON, or nullopt when uncalibrated.
  std::optional<std::string> calibration_json() const;
  const DeviceInfo& device_info() const noexcept { return device_.info(); }
  // A consistent snapshot (takes the registry lock shortly; never waits for a tuning).
  EngineStats stats() const;

 private:
  struct Resident;
  struct TuneJob {
    std::shared_ptr<Resident> matrix;
    bool force = false;       // drop the stored plan and tune
    bool bypass_cache = false;  // tune even if the cache has a plan (a wider budget)
    std::uint64_t expected_multiplies = 0;
    std::shared_ptr<std::promise<TuneOutcome>> done;
  };
  std::shared_ptr<Resident> find(const std::string& handle) const;
  std::shared_future<TuneOutcome> queue_tuning(const std::shared_ptr<Resident>& m, bool force,
                                               bool bypass_cache,
                                               std::uint64_t expected_multiplies);
  void run_tuning_thread();
  void run_refit_thread();  // refit_models every refit_interval_s until stopping_
  FeatureEffort feature_effort_for(std::uint64_t expected_multiplies) const noexcept;
  TuneOutcome run_tuning(const TuneJob& job);
  PlanKey plan_key(const Resident& m) const;
  // The stored plan for m, if this build can still run it (computing its format's thorough
  // features where the plan needs them); drops one it cannot.
  std::optional<Plan> cached_plan(Resident& m);
  // The feature pass of m at `effort` for a tuning expecting `expected_multiplies`: the first
  // pass, a thorough one where a standard one was made, or the formats an earlier pass left
  // out that these multiplies now repay (nothing where none). Timed into m.features_ms (part
  // of the tuning cost); the partitions a thorough pass computed are offered to m's build
  // source.
  void extract_features_of(Resident& m, FeatureEffort effort, std::uint64_t expected_multiplies);
  // The formats whose build a tuning of m expecting `expected_multiplies` could repay, given
  // its features so far (tuner.hpp repayable_formats; the serving plan is m's); every format
  // without models for m's precision, or where tunings are forced exhaustive (the oracle).
  FormatFilter repayable_for(Resident& m, const MatrixFeatures& features,
                             std::uint64_t expected_multiplies) const;
  // m's build source, made again where a finished tuning released it.
  BuildSource& source_of(Resident& m);
  void forget_plan(const PlanKey& key);  // erase, logging a store failure
  // Builds plan for m under the device lock, its host phase without it (kernels/device_lock.hpp).
  std::unique_ptr<SpmvOperator> build_locked(Resident& m, const Plan& plan);
  // Whether `plan` is the one m serves already (same format, parameters, launch, precision).
  bool serves(Resident& m, const Plan& plan);
  // Makes (plan, op) the matrix's serving plan, after the multiplies in flight on the old one;
  // a null op keeps the serving build (the plan is the one it was built for).
  void swap_in(Resident& m, const Plan& plan, std::unique_ptr<SpmvOperator> op, bool tuned);
  std::uint64_t bytes_in_use_by_others(const Resident& m) const;
  void install_calibration(const DeviceCalibration& calibration, std::string json);
  // The tuning's measurements as samples (best effort: a store failure is logged).
  void store_samples(const Resident& m, const std::vector<MeasuredCandidate>& measurements,
                     std::int64_t tuned_ms, bool predicted);
  PrecisionRefit refit_precision(const ModelSet& set);
  std::shared_ptr<const ModelPredictor> predictor_for(Precision precision) const;

  struct Models {
    std::string json;
    ModelPredictor fp32;
    ModelPredictor fp64;
  };

  EngineConfig config_;
  Device& device_;
  PlanStore& plans_;
  const FormatRegistry& registry_;
  mutable std::shared_mutex residents_mutex_;
  std::map<std::string, std::shared_ptr<Resident>> residents_;
  std::uint64_t reserved_bytes_ = 0;  // guarded by residents_mutex_
  std::mutex device_mutex_;
  // What this daemon's host builds took over the calibration's estimates (tuner/
  // host_build_history.hpp); cleared when a calibration brings other build rates.
  HostBuildHistory host_build_history_;
  mutable std::mutex models_mutex_;
  std::shared_ptr<const Models> models_;  // swapped whole by a (re)calibration
  std::unique_ptr<MemoryTrimmer> trimmer_;  // null when trim_memory_interval_ms is 0
  mutable std::mutex counters_mutex_;
  EngineCounters counters_;  // guarded by counters_mutex_
  std::atomic<bool> calibrating_{false};
  std::mutex refit_mutex_;  // one refit (or calibration install after it) at a time
  // The tuning thread and its queue (guarded by queue_mutex_).
  std::mutex queue_mutex_;
  std::condition_variable queue_cv_;
  std::deque<TuneJob> queue_;
  bool stopping_ = false;
  std::thread tuning_thread_;  // started when everything it uses exists
  std::condition_variable refit_cv_;  // wakes the refit thread to stop (with queue_mutex_)
  std::thread refit_thread_;  // last; only with refit_interval_s
};

// 128 random bits from the OS as 32 hex digits: a handle nobody can guess.
std::string new_matrix_handle();

}  // namespace spmvd
