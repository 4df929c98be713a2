#include "server/engine.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <random>
#include <sstream>

#include "core/error.hpp"
#include "db/plan_sql.hpp"
#include "kernels/device_lock.hpp"
#include "kernels/formats/cpu_csr/cpu_csr_rules.hpp"
#include "kernels/formats/cusparse_csr/cusparse_csr_rules.hpp"
#include "tuner/feature_extraction.hpp"

namespace spmvd {

using std::to_string;

struct Engine::Resident {
  MatrixSummary summary;
  CsrMatrix<double> host;  // kept to (re)build formats; structure also keys the plan cache
  // What the default plan and the tuning's candidates are built from: the CSR uploaded once
  // (kernels/build_source.hpp). Dropped when a tuning ends, so the device CSR then lives only
  // as long as the resident plan uses it; the tuning thread alone touches it after add_matrix.
  std::unique_ptr<BuildSource> source;
  // Until the tuning thread's feature pass: the shape alone (rows, cols, nnz), all the default
  // plan needs, so that Upload returns without waiting for the pass (tens of ms on large
  // matrices). The tuning thread alone touches both after add_matrix.
  MatrixFeatures features;
  bool features_extracted = false;
  FeatureEffort features_effort = FeatureEffort::standard;
  double features_ms = 0.0;  // the feature pass: part of the tuning cost
  std::uint64_t expected_multiplies = 0;  // the upload's hint (0: the configured default)
  std::uint64_t reserved_bytes = 0;  // counted against the budget (guarded by residents_mutex_)
  std::mutex mutex;                  // guards plan, tuned, op and the vectors
  Plan plan;                         // serving: the default plan until tuned
  bool tuned = false;
  std::unique_ptr<SpmvOperator> op;
  // One x and one y on the device, allocated with the first format (and counted in the budget)
  // so that a multiply allocates nothing.
  DeviceBuffer x;
  DeviceBuffer y;
  // The latest queued tuning (guarded by the engine's queue_mutex_): Tune waits on it.
  std::optional<std::shared_future<TuneOutcome>> tuning;
  std::atomic<bool> released{false};
};

namespace {

// What a matrix needs before it is tuned: CSR arrays plus one x and one y.
std::uint64_t csr_bytes_estimate(const MatrixFeatures& f, Precision p) {
  const std::uint64_t vb = value_bytes(p);
  return static_cast<std::uint64_t>(f.nnz) * (vb + sizeof(ColIndex)) +
         static_cast<std::uint64_t>(f.rows + 1) * sizeof(RowOffset) +
         static_cast<std::uint64_t>(f.rows + f.cols) * vb;
}

double elapsed_ms(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - since)
      .count();
}

// Copies a double vector to the device in the operator's precision.
void copy_vector_in(Device& device, const std::vector<double>& host, Precision p, void* dst) {
  if (p == Precision::fp64) {
    device.copy_from_host(dst, host.data(), host.size() * sizeof(double));
  } else {
    const std::vector<float> narrow(host.begin(), host.end());
    device.copy_from_host(dst, narrow.data(), narrow.size() * sizeof(float));
  }
}

std::vector<double> copy_vector_out(Device& device, const void* src, std::size_t n, Precision p) {
  std::vector<double> out(n);
  if (p == Precision::fp64) {
    device.copy_to_host(out.data(), src, n * sizeof(double));
  } else {
    std::vector<float> narrow(n);
    device.copy_to_host(narrow.data(), src, n * sizeof(float));
    out.assign(narrow.begin(), narrow.end());
  }
  return out;
}

void check_vectors(const char* name, const std::vector<std::vector<double>>& vectors,
                   std::int64_t expected, const char* dimension) {
  for (std::size_t i = 0; i < vectors.size(); ++i) {
    const auto& v = vectors[i];
    if (static_cast<std::int64_t>(v.size()) != expected)
      throw_invalid(std::string(name) + "[" + to_string(i) + "] has " + to_string(v.size()) +
                    " entries, the matrix has " + to_string(expected) + " " + dimension);
    for (std::size_t k = 0; k < v.size(); ++k)
      if (!std::isfinite(v[k]))
        throw_invalid(std::string(name) + "[" + to_string(i) + "][" + to_string(k) +
                      "] is not finite");
  }
}

}  // namespace

std::string new_matrix_handle() {
  std::random_device entropy;  // getrandom(2) on Linux
  std::ostringstream hex;
  hex << std::hex;
  for (int i = 0; i < 4; ++i) {
    hex.width(8);
    hex.fill('0');
    hex << static_cast<std::uint32_t>(entropy());
  }
  return hex.str();
}

Plan default_plan(const FormatRegistry& registry, const MatrixFeatures& features,
                  const DeviceInfo& device, Precision precision) {
  // The reference plan first (cuSPARSE CSR ALG1), else the CPU's CSR; the memory
  // budget was checked against a CSR estimate at upload.
  const auto unlimited = std::numeric_limits<std::uint64_t>::max();
  for (const FormatId id : {kCusparseCsrFormatId, kCpuCsrFormatId}) {
    const FormatEntry* entry = registry.find(id);
    if (entry == nullptr) continue;
    const FormatRules& rules = *entry->rules;
    if (rules.needs_gpu() && !device.is_gpu) continue;
    if (!rules.admissible(features, device, precision, unlimited)) continue;
    for (const Candidate& c : rules.candidates(features, device)) {
      if (id == kCusparseCsrFormatId && !is_baseline_candidate(c)) continue;
      Plan plan;
      plan.format = c.format;
      plan.format_name = std::string(rules.name());
      plan.params = c.params;
      plan.launch = c.launch;
      plan.precision = precision;
      plan.tuner_version = kTunerVersion;
      plan.features = features;
      return plan;
    }
  }
  throw Error(ErrorCode::failed_precondition,
              "no default format (cuSPARSE CSR ALG1 or CPU CSR) can serve this matrix here");
}

Engine::Engine(EngineConfig config, Device& device, PlanStore& plans,
               const FormatRegistry& registry)
    : config_(config), device_(device), plans_(plans), registry_(registry) {
  if (config_.trim_memory_interval_ms > 0)
    trimmer_ = std::make_unique<MemoryTrimmer>(
        std::chrono::milliseconds(config_.trim_memory_interval_ms),
        [this] { device_.release_unused_memory(); });
  tuning_thread_ = std::thread([this] { run_tuning_thread(); });
  if (config_.refit_interval_s > 0) refit_thread_ = std::thread([this] { run_refit_thread(); });
}

Engine::~Engine() {
  {
    std::lock_guard lock(queue_mutex_);
    stopping_ = true;
  }
  queue_cv_.notify_all();
  refit_cv_.notify_all();
  if (refit_thread_.joinable()) refit_thread_.join();
  tuning_thread_.join();
  // Tunings still queued never ran: their waiters hear why.
  for (TuneJob& job : queue_)
    job.done->set_exception(std::make_exception_ptr(
        Error(ErrorCode::unavailable, "the daemon is shutting down; the tuning did not run")));
}

MatrixSummary Engine::add_matrix(CsrMatrix<double> matrix, Precision precision, std::string name,
                                 std::uint64_t expected_multiplies) {
  const auto add_start = std::chrono::steady_clock::now();
  auto resident = std::make_shared<Resident>();
  resident->features.rows = matrix.rows;
  resident->features.cols = matrix.cols;
  resident->features.nnz = matrix.nnz();
  resident->expected_multiplies = expected_multiplies;
  resident->summary = {new_matrix_handle(), std::move(name), matrix.rows, matrix.cols,
                       matrix.nnz(),        precision,       structural_fingerprint(matrix)};
  resident->host = std::move(matrix);
  resident->source = std::make_unique<BuildSource>(resident->host, device_);
  resident->reserved_bytes = csr_bytes_estimate(resident->features, precision);
  const Plan first = default_plan(registry_, resident->features, device_.info(), precision);

  {
    std::unique_lock lock(residents_mutex_);
    if (reserved_bytes_ + resident->reserved_bytes > config_.memory_budget_bytes)
      throw Error(ErrorCode::resource_exhausted,
                  "matrix needs about " + to_string(resident->reserved_bytes) +
                      " device bytes; " + to_string(reserved_bytes_) + " of the " +
                      to_string(config_.memory_budget_bytes) +
                      "-byte memory budget are in use (release matrices or raise "
                      "--memory-budget-bytes)");
    reserved_bytes_ += resident->reserved_bytes;
  }
  const auto build_start = std::chrono::steady_clock::now();
  try {
    // Servable before the handle is returned: the first multiply never waits for tuning.
    swap_in(*resident, first, build_locked(*resident, first), /*tuned=*/false);
  } catch (...) {
    std::unique_lock lock(residents_mutex_);
    reserved_bytes_ -= resident->reserved_bytes;
    throw;
  }
  {
    std::unique_lock lock(residents_mutex_);
    residents_[resident->summary.handle] = resident;
  }
  const double build_ms = elapsed_ms(build_start);
  spdlog::info("matrix {} '{}' resident: {} x {}, {} nonzeros, {}, fingerprint {}; serving {} "
               "while it is tuned (servable {:.2f} ms after the matrix arrived, {:.2f} ms of it "
               "the device copy and the default plan's build)",
               resident->summary.handle, resident->summary.name, resident->summary.rows,
               resident->summary.cols, resident->summary.nnz, to_string(precision),
               resident->summary.fingerprint.hex(), first.format_name, elapsed_ms(add_start),
               build_ms);
  queue_tuning(resident, false, false, expected_multiplies);
  return resident->summary;
}

std::shared_ptr<Engine::Resident> Engine::find(const std::string& handle) const {
  std::shared_lock lock(residents_mutex_);
  auto it = residents_.find(handle);
  if (it == residents_.end())
    throw Error(ErrorCode::not_found, "no resident matrix has handle '" + handle + "'");
  return it->second;
}

std::uint64_t Engine::bytes_in_use_by_others(const Resident& m) const {
  std::shared_lock lock(residents_mutex_);
  return reserved_bytes_ - m.reserved_bytes;
}

PlanKey Engine::plan_key(const Resident& m) const {
  return PlanKey{m.summary.fingerprint, device_.info().signature(), m.summary.precision,
                 kTunerVersion, kModelVersion};
}

FormatFilter Engine::repayable_for(Resident& m, const MatrixFeatures& features,
                                   std::uint64_t expected_multiplies) const {
  if (config_.tuner.mode == TuneMode::exhaustive) return {};
  const std::shared_ptr<const ModelPredictor> models = predictor_for(m.summary.precision);
  if (!models) return {};
  Candidate serving;
  {
    std::lock_guard lock(m.mutex);
    serving = Candidate{m.plan.format, m.plan.params, m.plan.launch};
  }
  return repayable_formats(*models, registry_, features, device_.info(), m.summary.precision,
                           config_.tuner, serving, expected_multiplies, &host_build_history_);
}

void Engine::extract_features_of(Resident& m, FeatureEffort effort,
                                 std::uint64_t expected_multiplies) {
  const auto start = std::chrono::steady_clock::now();
  // A thorough pass computes reorderings to size them (RCM): the builds take them from here.
  std::vector<std::shared_ptr<const PlanPartition>> computed;
  if (!m.features_extracted ||
      (effort == FeatureEffort::thorough && m.features_effort == FeatureEffort::standard)) {
    m.features = extract_features(
        m.host, registry_, effort, &computed, [&](const MatrixFeatures& common) {
          return repayable_for(m, common, expected_multiplies);
        });
    m.features_ms = 0.0;
    m.features_extracted = true;
    m.features_effort = effort;
  } else if (m.features.formats_left_out.empty() ||
             extend_features(m.host, registry_, m.features_effort, m.features,
                             repayable_for(m, m.features, expected_multiplies),
                             &computed) == 0) {
    return;
  }
  for (std::shared_ptr<const PlanPartition>& partition : computed)
    source_of(m).offer_partition(std::move(partition));
  // An extension adds to the pass it extends: the plan's features cost both.
  m.features_ms += elapsed_ms(start);
}

std::optional<Plan> Engine::cached_plan(Resident& m) {
  const PlanKey key = plan_key(m);
  std::optional<Plan> plan;
  try {
    plan = plans_.find(key);
  } catch (const Error& e) {
    // The cache is an optimisation: if it cannot be read, tune as if it were empty.
    spdlog::warn("plan cache lookup failed, tuning instead: {}", e.what());
    return std::nullopt;
  }
  if (!plan) return std::nullopt;
  const FormatEntry* entry = registry_.find(plan->format);
  const Candidate candidate{plan->format, plan->params, plan->launch};
  // A plan tuned expecting more multiplies may be of a format this matrix's pass left out (its
  // build not repaid at this hint): its own features are computed before it is judged, as the
  // price of a hit that skips the tuning, and count in the features' cost.
  if (entry != nullptr && m.features.left_out(entry->rules->name())) {
    const auto start = std::chrono::steady_clock::now();
    std::vector<std::shared_ptr<const PlanPartition>> computed;
    extend_features(m.host, registry_, m.features_effort, m.features,
                    [entry](const FormatEntry& e) { return &e == entry; }, &computed);
    for (std::shared_ptr<const PlanPartition>& partition : computed)
      source_of(m).offer_partition(std::move(partition));
    m.features_ms += elapsed_ms(start);
  }
  // A plan made from a thorough pass (an RCM reordering, sized only there) may be loaded with
  // a standard one: before it is judged invalid, its format's thorough features (only that
  // format's, and only where it has any) are computed.
  // A plan that carries its partition (an RCM order) has the thorough features it was made from
  // stored with it, computed from this same structure (the fingerprint keys the plan): those are
  // used first, every format's (a format may read another's: cuda_csr_rcm reads cuda_bro_ell's
  // RCM sizing), so that loading the order does not pay for computing it in the features instead.
  if (entry != nullptr && m.features_effort == FeatureEffort::standard &&
      !entry->rules->is_valid(candidate, m.features, device_.info())) {
    const std::string name(entry->rules->name());
    if (plan->partition)
      for (const auto& [format, stored] : plan->features.format_features)
        m.features.format_features[format] = stored;
    if (!entry->rules->is_valid(candidate, m.features, device_.info()))
      if (std::optional<ThoroughOwnFeatures> own =
              entry->rules->thorough_own_features(m.host, m.features)) {
        m.features.format_features[name] = std::move(own->features);
        for (std::shared_ptr<const PlanPartition>& partition : own->partitions)
          source_of(m).offer_partition(std::move(partition));
      }
  }
  if (entry == nullptr || !entry->rules->is_valid(candidate, m.features, device_.info())) {
    spdlog::warn("cached plan for {} names format {} ({}) that this build cannot run; "
                 "dropping it and re-tuning",
                 m.summary.fingerprint.hex(), plan->format.value, plan->format_name);
    forget_plan(key);  // else it would outlive every re-tune that measures slower than it
    return std::nullopt;
  }
  return plan;
}

void Engine::forget_plan(const PlanKey& key) {
  try {
    plans_.erase(key);
  } catch (const Error& e) {
    spdlog::warn("could not drop the stored plan {}: {}", to_string(key), e.what());
  }
}

std::unique_ptr<SpmvOperator> Engine::build_locked(Resident& m, const Plan& plan) {
  const FormatEntry* entry = registry_.find(plan.format);
  if (entry == nullptr)
    throw Error(ErrorCode::internal, "plan names unregistered format id " +
                                         to_string(plan.format.value));
  const Candidate candidate{plan.format, plan.params, plan.launch};
  // A stored plan's partition (a cache hit): the build checks it and uses it instead of
  // computing it again (kernels/build_source.hpp).
  BuildSource& source = source_of(m);
  source.offer_partition(plan.partition.shared());
  // Held for the build but its host phase (a cache hit of an EHYB plan lays its stored parts out
  // again, a BRO plan encodes its streams: hundreds of milliseconds): multiplies of the other
  // matrices go on meanwhile (kernels/device_lock.hpp).
  class BuildLock final : public DeviceLockHolder {
   public:
    explicit BuildLock(std::mutex& mutex) : lock_(mutex) {}
    void release() override { lock_.unlock(); }
    void reacquire() override { lock_.lock(); }

   private:
    std::unique_lock<std::mutex> lock_;
  } lock(device_mutex_);
  const HeldForBuild held(lock);
  return entry->build(source, m.summary.precision, candidate);
}

BuildSource& Engine::source_of(Resident& m) {
  // Released after each tuning (its device CSR lives only as long as a plan uses it); a later
  // tuning or build makes it again.
  if (!m.source) m.source = std::make_unique<BuildSource>(m.host, device_);
  return *m.source;
}

bool Engine::serves(Resident& m, const Plan& plan) {
  std::lock_guard lock(m.mutex);
  return m.op && m.plan.format == plan.format && m.plan.params == plan.params &&
         m.plan.launch == plan.launch && m.plan.precision == plan.precision;
}

void Engine::swap_in(Resident& m, const Plan& plan, std::unique_ptr<SpmvOperator> op, bool tuned) {
  std::unique_ptr<SpmvOperator> old;
  {
    // Waits for the multiply in flight, if any: it finishes on the plan it started with.
    std::lock_guard lock(m.mutex);
    const std::size_t vb = value_bytes(m.summary.precision);
    if (!m.x.data() && !m.y.data()) {
      std::lock_guard device_lock(device_mutex_);
      m.x = DeviceBuffer(device_, static_cast<std::size_t>(m.summary.cols) * vb);
      m.y = DeviceBuffer(device_, static_cast<std::size_t>(m.summary.rows) * vb);
    }
    if (op) {
      old = std::move(m.op);
      m.op = std::move(op);
    }
    m.plan = plan;
    m.tuned = tuned;
    const std::uint64_t bytes = m.op->device_bytes() + m.x.bytes() + m.y.bytes();
    std::unique_lock residents_lock(residents_mutex_);
    // A released matrix no longer counts (release subtracted it); its tuning may still finish.
    if (!m.released) reserved_bytes_ = reserved_bytes_ - m.reserved_bytes + bytes;
    m.reserved_bytes = bytes;
  }
  old.reset();  // the old format's memory goes once no multiply can use it
}

std::shared_future<TuneOutcome> Engine::queue_tuning(const std::shared_ptr<Resident>& m,
                                                     bool force, bool bypass_cache,
                                                     std::uint64_t expected_multiplies) {
  TuneJob job{m, force, bypass_cache, expected_multiplies,
              std::make_shared<std::promise<TuneOutcome>>()};
  std::shared_future<TuneOutcome> done = job.done->get_future().share();
  {
    std::lock_guard lock(queue_mutex_);
    if (stopping_) throw Error(ErrorCode::unavailable, "the daemon is shutting down");
    m->tuning = done;
    queue_.push_back(std::move(job));
  }
  queue_cv_.notify_one();
  return done;
}

void Engine::run_tuning_thread() {
  for (;;) {
    TuneJob job;
    {
      std::unique_lock lock(queue_mutex_);
      queue_cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      job = std::move(queue_.front());
      queue_.pop_front();
    }
    if (job.matrix->released) {
      job.done->set_exception(std::make_exception_ptr(Error(
          ErrorCode::not_found, "matrix " + job.matrix->summary.handle + " was released")));
      continue;
    }
    try {
      job.done->set_value(run_tuning(job));
    } catch (const Error& e) {
      // The default plan keeps serving; a Tune request hears why, and may queue another.
      spdlog::warn("matrix {}: tuning failed, it stays on its current plan: {}",
                   job.matrix->summary.handle, e.what());
      job.done->set_exception(std::current_exception());
    } catch (const std::exception& e) {
      spdlog::error("matrix {}: tuning failed: {}", job.matrix->summary.handle, e.what());
      job.done->set_exception(std::current_exception());
    }
  }
}

// A thorough pass only where the multiplies expected can pay for it (docs/TUNER.md "Feature
// effort").
FeatureEffort Engine::feature_effort_for(std::uint64_t expected_multiplies) const noexcept {
  return expected_multiplies >= config_.tuner.thorough_features_multiplies
             ? FeatureEffort::thorough
             : FeatureEffort::standard;
}

TuneOutcome Engine::run_tuning(const TuneJob& job) {
  Resident& m = *job.matrix;
  const auto start = std::chrono::steady_clock::now();
  TuneOutcome outcome;
  // A forced re-tune replaces the stored plan even when it measures slower (plan_store.hpp).
  if (job.force) forget_plan(plan_key(m));
  const std::uint64_t hinted =
      job.expected_multiplies ? job.expected_multiplies : m.expected_multiplies;
  const std::uint64_t expected = hinted ? hinted : config_.tuner.default_expected_multiplies;
  // A later tuning expecting more extends a standard pass.
  extract_features_of(m, feature_effort_for(expected), expected);
  std::optional<Plan> plan = job.force || job.bypass_cache ? std::nullopt : cached_plan(m);
  outcome.cache_hit = plan.has_value();
  std::unique_ptr<SpmvOperator> op;
  double waited_ms = 0.0;  // device lock waits behind multiplies, outside the tuning cost
  if (!plan) {
    TunerOptions options = config_.tuner;
    const std::uint64_t others = bytes_in_use_by_others(m);
    std::uint64_t serving = 0;
    {
      std::shared_lock lock(residents_mutex_);
      serving = m.reserved_bytes;
    }
    // The serving format stays resident while candidates are built beside it. Formats may
    // outgrow their estimate, so the others can exceed the budget: then nothing is left.
    options.memory_budget_bytes = others + serving < config_.memory_budget_bytes
                                      ? config_.memory_budget_bytes - others - serving
                                      : 0;
    const auto models = predictor_for(m.summary.precision);
    const std::int64_t tuned_ms = now_unix_ms();
    // The serving build (the default plan's ALG1, or the previous tuning's plan) is measured
    // where it stands instead of being built again; only this thread swaps it.
    ServingBuild serving_build;
    {
      std::lock_guard lock(m.mutex);
      serving_build = {Candidate{m.plan.format, m.plan.params, m.plan.launch}, m.op.get()};
    }
    TunedPlan tuned = tune_matrix(registry_, device_, m.host, m.features, m.summary.precision,
                                  options, models.get(),
                                  TuneHints{.expected_multiplies = expected,
                                            .features_ms = m.features_ms},
                                  &device_mutex_, m.source.get(), &serving_build,
                                  &host_build_history_);
    plan = std::move(tuned.plan);
    op = std::move(tuned.op);
    for (const MeasuredCandidate& c : tuned.measurements) {
      const FormatEntry* entry = registry_.find(c.candidate.format);
      spdlog::debug("matrix {}: measured {} [{}] [{}]: predicted {}, measured {:.4f} ms; build "
                    "{:.2f} ms, runs {:.2f} ms",
                    m.summary.handle, entry ? entry->rules->name() : "?",
                    to_string(c.candidate.params), to_string(c.candidate.launch),
                    c.predicted_ms ? fmt::format("{:.4f} ms", *c.predicted_ms) : "-",
                    c.measured_ms, c.build_ms, c.runs_ms);
    }
    waited_ms = tuned.waited_ms;
    try {
      plans_.put(plan_key(m), *plan);
    } catch (const Error& e) {
      spdlog::warn("could not store the plan for {}: {}", m.summary.fingerprint.hex(), e.what());
    }
    store_samples(m, tuned.measurements, tuned_ms, models != nullptr);
  }
  // The measured build is swapped in as it is; so is the serving one if it won (it stays);
  // a plan from the cache is built here unless it is the serving plan.
  if (!op && !serves(m, *plan)) op = build_locked(m, *plan);
  swap_in(m, *plan, std::move(op), /*tuned=*/true);
  // The device CSR and the layouts now live only as long as the resident plan uses them.
  m.source.reset();
  outcome.plan = *plan;
  outcome.tune_ms = elapsed_ms(start);
  {
    std::lock_guard lock(counters_mutex_);
    if (outcome.cache_hit) {
      ++counters_.plan_cache_hits;
    } else {
      ++counters_.plan_cache_misses;
      counters_.tuning_ms_total += plan->tuning.cost.total_ms;
      counters_.tuning_spmv_equivalents_total += plan->tuning_spmv_equivalents();
    }
  }
  if (outcome.cache_hit) {
    spdlog::info("matrix {}: plan {} [{}] [{}] {:.4f} ms (cache hit, {:.1f} ms)",
                 m.summary.handle, plan->format_name, to_string(plan->params),
                 to_string(plan->launch), plan->measured_ms, outcome.tune_ms);
  } else {
    const TuningRecord& t = plan->tuning;
    const auto eq = [&](double ms) { return spmv_equivalents(ms, plan->measured_ms); };
    spdlog::info(
        "matrix {}: plan {} [{}] [{}] {:.4f} ms, tuned {} (k {}, {} measured; budget {:.1f} ms "
        "for {} multiplies): features {:.2f} ms ({:.0f} SpMV), ranking {:.2f} ms ({:.0f}), "
        "builds {:.2f} ms ({:.0f}), measurements {:.2f} ms ({:.0f}), total {:.2f} ms = {:.0f} "
        "SpMV-equivalents",
        m.summary.handle, plan->format_name, to_string(plan->params), to_string(plan->launch),
        plan->measured_ms, to_string(t.mode), t.k, plan->candidates_measured, t.budget_ms,
        t.expected_multiplies, t.cost.features_ms, eq(t.cost.features_ms), t.cost.ranking_ms,
        eq(t.cost.ranking_ms), t.cost.builds_ms, eq(t.cost.builds_ms), t.cost.measurements_ms,
        eq(t.cost.measurements_ms), t.cost.total_ms, eq(t.cost.total_ms));
    if (waited_ms > 0.05)
      spdlog::info("matrix {}: the tuning waited {:.2f} ms for other requests' multiplies (not "
                   "in its cost)",
                   m.summary.handle, waited_ms);
  }
  return outcome;
}

TuneOutcome Engine::tune(const std::string& handle, bool force,
                         std::uint64_t expected_multiplies) {
  auto m = find(handle);
  std::shared_future<TuneOutcome> pending;
  {
    std::lock_guard lock(queue_mutex_);
    if (m->tuning) pending = *m->tuning;
  }
  if (force || !pending.valid())
    return queue_tuning(m, force, false, expected_multiplies).get();
  // A failed tuning is retried on request; a finished one is widened when the hint grew.
  std::optional<TuneOutcome> done;
  try {
    done = pending.get();
  } catch (const Error&) {
    return queue_tuning(m, false, false, expected_multiplies).get();
  }
  // Widened where the earlier tuning left candidates unmeasured, or where the hint now pays for
  // features the matrix has not had: a thorough pass offers candidates (RCM layouts), and so
  // does a format the earlier pass left out, which even an exhaustive tuning never saw.
  const TuningRecord& t = done->plan.tuning;
  const auto new_candidates = [&] {
    if (feature_effort_for(expected_multiplies) == FeatureEffort::thorough &&
        m->features_effort == FeatureEffort::standard)
      return true;
    const MatrixFeatures& tuned_from = done->plan.features;
    if (tuned_from.formats_left_out.empty()) return false;
    const FormatFilter repayable = repayable_for(*m, tuned_from, expected_multiplies);
    return std::ranges::any_of(tuned_from.formats_left_out, [&](const std::string& name) {
      const FormatEntry* entry = registry_.find(name);
      return entry != nullptr && (!repayable || repayable(*entry));
    });
  };
  if (expected_multiplies > t.expected_multiplies &&
      (t.mode != TuneMode::exhaustive || new_candidates()))
    return queue_tuning(m, false, true, expected_multiplies).get();
  return *done;
}

MultiplyOutcome Engine::multiply(const std::string& handle, double alpha, double beta,
                                 const std::vector<std::vector<double>>& xs,
                                 const std::vector<std::vector<double>>& ys) {
  auto m = find(handle);
  if (!std::isfinite(alpha) || !std::isfinite(beta)) throw_invalid("alpha and beta must be finite");
  if (xs.empty()) throw_invalid("no x vectors in the request");
  if (beta != 0.0 && ys.size() != xs.size())
    throw_invalid("beta is " + to_string(beta) + " so one y per x is needed: got " +
                  to_string(ys.size()) + " y for " + to_string(xs.size()) + " x");
  if (beta == 0.0 && !ys.empty() && ys.size() != xs.size())
    throw_invalid("got " + to_string(ys.size()) + " y for " + to_string(xs.size()) + " x");
  check_vectors("x", xs, m->summary.cols, "columns");
  check_vectors("y", ys, m->summary.rows, "rows");

  // Held throughout: a swap of the plan waits until this multiply is done.
  std::lock_guard lock(m->mutex);
  MultiplyOutcome outcome;
  outcome.plan = m->plan;
  outcome.default_plan = !m->tuned;
  const Precision p = m->summary.precision;
  std::lock_guard device_lock(device_mutex_);
  for (std::size_t i = 0; i < xs.size(); ++i) {
    copy_vector_in(device_, xs[i], p, m->x.data());
    if (beta != 0.0) copy_vector_in(device_, ys[i], p, m->y.data());
    outcome.device_ms +=
        device_.time_ms([&] { m->op->apply(m->x.data(), m->y.data(), alpha, beta); });
    outcome.y.push_back(
        copy_vector_out(device_, m->y.data(), static_cast<std::size_t>(m->summary.rows), p));
  }
  return outcome;
}

void Engine::release(const std::string& handle) {
  std::shared_ptr<Resident> m;
  {
    std::unique_lock lock(residents_mutex_);
    auto it = residents_.find(handle);
    if (it == residents_.end())
      throw Error(ErrorCode::not_found, "no resident matrix has handle '" + handle + "'");
    m = std::move(it->second);
    residents_.erase(it);
    reserved_bytes_ -= m->reserved_bytes;
    m->released = true;  // a queued tuning of it is skipped
  }
  // In-flight requests hold their own reference; the device memory goes with the last one.
  m.reset();
  if (trimmer_) trimmer_->request();
  {
    std::lock_guard lock(counters_mutex_);
    ++counters_.matrices_released;
  }
  spdlog::info("matrix {} released", handle);
}

void Engine::install_calibration(const DeviceCalibration& calibration, std::string json) {
  auto models = std::make_shared<const Models>(
      Models{std::move(json), ModelPredictor(calibration.fp32), ModelPredictor(calibration.fp64)});
  std::lock_guard lock(models_mutex_);
  // The history's ratios are over the calibrated build rates: other rates start it again (a
  // measured refit keeps them, and the history with them).
  const auto rates_of = [](const Models& m) {
    return std::pair(m.fp32.model_set().host_build_rates, m.fp64.model_set().host_build_rates);
  };
  if (!models_ || rates_of(*models_) != rates_of(*models)) host_build_history_.clear();
  models_ = std::move(models);
}

std::shared_ptr<const ModelPredictor> Engine::predictor_for(Precision precision) const {
  std::lock_guard lock(models_mutex_);
  if (!models_) return nullptr;
  // Aliasing constructor: the predictor lives as long as the Models it belongs to.
  return {models_, precision == Precision::fp32 ? &models_->fp32 : &models_->fp64};
}

bool Engine::load_calibration(bool calibrate_when_missing,
                              const CalibrationProgressFn& on_progress) {
  const std::string device = device_.info().signature();
  std::optional<std::string> stored;
  try {
    stored = plans_.find_calibration(device, kModelVersion);
  } catch (const Error& e) {
    spdlog::warn("cannot read the stored calibration: {}", e.what());
  }
  if (stored) {
    try {
      install_calibration(device_calibration_from_json(*stored, device), *stored);
      spdlog::info("performance models: stored calibration for this device (model version {})",
                   kModelVersion);
      return true;
    } catch (const Error& e) {
      // A calibration that does not decode is replaced, like a bad plan.
      spdlog::warn("stored calibration unusable ({}); recalibrating", e.what());
    }
  }
  if (!calibrate_when_missing) {
    spdlog::info("performance models: none stored; the tuner measures every candidate");
    return false;
  }
  try {
    calibrate(on_progress);
  } catch (const Error& e) {
    // Models only decide what is measured: a daemon without them still serves, more slowly
    // tuned. `spmvctl calibrate` can retry once the cause is fixed.
    spdlog::error("calibration failed, the tuner measures every candidate: {}", e.what());
    return false;
  }
  return true;
}

void Engine::calibrate(const CalibrationProgressFn& on_progress) {
  const auto start = std::chrono::steady_clock::now();
  DeviceCalibration calibration;
  {
    std::lock_guard device_lock(device_mutex_);
    calibrating_ = true;
    struct Done {
      std::atomic<bool>& flag;
      ~Done() { flag = false; }
    } done{calibrating_};
    calibration = calibrate_device(registry_, device_, config_.calibration, on_progress);
  }
  std::string json = device_calibration_to_json(calibration);
  try {
    plans_.put_calibration(device_.info().signature(), kModelVersion, json);
  } catch (const Error& e) {
    spdlog::warn("could not store the calibration: {}", e.what());
  }
  install_calibration(calibration, std::move(json));
  spdlog::info("performance models calibrated in {:.1f} s", elapsed_ms(start) / 1000.0);
}

void Engine::store_samples(const Resident& m, const std::vector<MeasuredCandidate>& measurements,
                           std::int64_t tuned_ms, bool predicted) {
  std::vector<MeasurementSample> samples;
  samples.reserve(measurements.size());
  for (const MeasuredCandidate& measured : measurements) {
    MeasurementSample sample;
    sample.device_signature = device_.info().signature();
    sample.fingerprint = m.summary.fingerprint.hex();
    sample.tuned_ms = tuned_ms;
    sample.model_version = predicted ? static_cast<std::uint32_t>(kModelVersion) : 0;
    Plan& p = sample.measured;
    p.format = measured.candidate.format;
    const FormatEntry* entry = registry_.find(p.format);
    p.format_name = entry != nullptr ? std::string(entry->rules->name()) : std::string();
    p.params = measured.candidate.params;
    p.launch = measured.candidate.launch;
    p.precision = m.summary.precision;
    p.predicted_ms = measured.predicted_ms.value_or(0.0);
    p.measured_ms = measured.measured_ms;
    p.tuner_version = kTunerVersion;
    p.features = m.features;
    samples.push_back(std::move(sample));
  }
  if (samples.empty()) return;
  try {
    plans_.put_samples(samples, config_.samples_per_format);
  } catch (const Error& e) {
    spdlog::warn("could not store the {} measured samples of {}: {}", samples.size(),
                 m.summary.fingerprint.hex(), e.what());
  }
}

void Engine::run_refit_thread() {
  const auto interval = std::chrono::seconds(config_.refit_interval_s);
  std::unique_lock lock(queue_mutex_);
  while (!refit_cv_.wait_for(lock, interval, [&] { return stopping_; })) {
    lock.unlock();
    {
      std::lock_guard models_lock(models_mutex_);
      if (!models_) {
        spdlog::debug("scheduled measured refit skipped: no calibration in use");
        lock.lock();
        continue;
      }
    }
    try {
      refit_models();  // logs each precision's outcome
    } catch (const std::exception& e) {
      spdlog::warn("scheduled measured refit failed: {}", e.what());
    }
    lock.lock();
  }
}

PrecisionRefit Engine::refit_precision(const ModelSet& set) {
  PrecisionRefit out;
  out.precision = set.precision;
  const std::vector<MeasurementSample> stored =
      plans_.list_samples(device_.info().signature(), set.precision);
  out.stored_samples = stored.size();
  // The models in use with the refit's own step off: the base each factor multiplies.
  const std::string without[] = {"measured_refit"};
  const ModelPredictor base(set, without);
  std::vector<RefitSample> samples;
  samples.reserve(stored.size());
  for (const MeasurementSample& s : stored) {
    const Plan& p = s.measured;
    const Candidate candidate{p.format, p.params, p.launch};
    const FormatEntry* entry = registry_.find(p.format);
    // A composed format is predicted as its parts, each with its own factor: it has none. A
    // sample whose parameters this build's format no longer accepts cannot be re-predicted.
    bool composed = true;
    try {
      composed = entry == nullptr || !entry->rules->parts(p.features, candidate).empty();
    } catch (const Error& e) {
      spdlog::debug("measured refit: sample of {} skipped: {}", p.format_name, e.what());
    }
    if (composed) {
      ++out.skipped_samples;
      continue;
    }
    const ModelCandidatePredictor predictor(base, registry_, p.features, device_.info(),
                                            p.precision);
    const std::optional<Prediction> prediction = predictor.predict(candidate);
    if (!prediction || !(prediction->ms > 0.0)) {
      ++out.skipped_samples;
      continue;
    }
    samples.push_back(RefitSample{.format = p.format,
                                  .tuning = s.fingerprint,
                                  .tuned_ms = s.tuned_ms,
                                  .base_ms = prediction->ms,
                                  .measured_ms = p.measured_ms});
  }
  out.report = refit_measured(samples, set.measured_refit);
  return out;
}

std::vector<PrecisionRefit> Engine::refit_models() {
  std::lock_guard refit_lock(refit_mutex_);
  std::shared_ptr<const Models> models;
  {
    std::lock_guard lock(models_mutex_);
    models = models_;
  }
  if (!models)
    throw Error(ErrorCode::failed_precondition,
                "no calibration in use on this daemon: calibrate first (spmvctl calibrate); the "
                "refit corrects calibrated models");
  DeviceCalibration calibration =
      device_calibration_from_json(models->json, device_.info().signature());
  std::vector<PrecisionRefit> refits;
  bool changed = false;
  for (ModelSet* set : {&calibration.fp64, &calibration.fp32}) {
    PrecisionRefit refit = refit_precision(*set);
    if (refit.report.accepted) {
      set->measured_refit = refit.report.factors;
      changed = true;
    }
    spdlog::info(
        "measured refit {}: {} samples ({} skipped), held-out median relative error {:.3f} -> "
        "{:.3f}, top-1 {:.2f} -> {:.2f} of {} tunings: {}",
        to_string(set->precision), refit.stored_samples, refit.skipped_samples,
        refit.report.median_relative_error_before, refit.report.median_relative_error_after,
        refit.report.top1_agreement_before, refit.report.top1_agreement_after,
        refit.report.top1_tunings,
        refit.report.accepted ? std::string("accepted") : "refused: " + refit.report.refusal);
    refits.push_back(std::move(refit));
  }
  if (!changed) return refits;
  {
    // A calibration installed meanwhile is newer than what was refitted: keep it.
    std::lock_guard lock(models_mutex_);
    if (models_ != models)
      throw Error(ErrorCode::failed_precondition,
                  "the models were recalibrated during the refit: nothing installed; refit again");
  }
  std::string json = device_calibration_to_json(calibration);
  try {
    plans_.put_calibration(device_.info().signature(), kModelVersion, json);
  } catch (const Error& e) {
    spdlog::warn("could not store the refitted calibration (in use until restart): {}", e.what());
  }
  install_calibration(calibration, std::move(json));
  for (PrecisionRefit& refit : refits) refit.installed = refit.report.accepted;
  return refits;
}

std::optional<std::string> Engine::calibration_json() const {
  std::lock_guard lock(models_mutex_);
  if (!models_) return std::nullopt;
  return models_->json;
}

EngineStats Engine::stats() const {
  EngineStats out;
  std::vector<std::shared_ptr<Resident>> residents;
  {
    std::shared_lock lock(residents_mutex_);
    out.resident_device_bytes = reserved_bytes_;
    for (const auto& [handle, m] : residents_) {
      residents.push_back(m);
      out.matrices.push_back({m->summary, m->reserved_bytes, {}});
    }
  }
  // The plan is guarded by the matrix's own lock, which a multiply holds: a matrix being
  // multiplied shows no format rather than stalling the snapshot.
  for (std::size_t i = 0; i < residents.size(); ++i) {
    std::unique_lock lock(residents[i]->mutex, std::try_to_lock);
    if (lock.owns_lock()) out.matrices[i].format = residents[i]->plan.format_name;
  }
  out.memory_budget_bytes = config_.memory_budget_bytes;
  {
    std::lock_guard lock(counters_mutex_);
    out.counters = counters_;
  }
  if (trimmer_) out.counters.memory_trims = trimmer_->trims();
  {
    std::lock_guard lock(models_mutex_);
    out.calibrated = models_ != nullptr;
  }
  out.calibrating = calibrating_;
  return out;
}

std::vector<MatrixSummary> Engine::list() const {
  std::shared_lock lock(residents_mutex_);
  std::vector<MatrixSummary> out;
  for (const auto& [handle, m] : residents_) out.push_back(m->summary);
  return out;
}

}  // namespace spmvd
