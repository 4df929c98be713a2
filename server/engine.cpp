#include "server/engine.hpp"

#include <spdlog/spdlog.h>

#include <chrono>
#include <cmath>
#include <random>
#include <sstream>

#include "core/error.hpp"
#include "tuner/feature_extraction.hpp"

namespace spmvd {

using std::to_string;

struct Engine::Resident {
  MatrixSummary summary;
  CsrMatrix<double> host;  // kept to (re)build formats; structure also keys the plan cache
  MatrixFeatures features;
  std::uint64_t reserved_bytes = 0;  // counted against the budget (guarded by residents_mutex_)
  std::mutex mutex;                  // guards plan, op and the vectors
  std::optional<Plan> plan;
  std::unique_ptr<SpmvOperator> op;
  // One x and one y on the device, allocated with the format (and counted in its budget) so
  // that a multiply allocates nothing.
  DeviceBuffer x;
  DeviceBuffer y;
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

Engine::Engine(EngineConfig config, Device& device, PlanStore& plans,
               const FormatRegistry& registry)
    : config_(config), device_(device), plans_(plans), registry_(registry) {
  if (config_.trim_memory_interval_ms > 0)
    trimmer_ = std::make_unique<MemoryTrimmer>(
        std::chrono::milliseconds(config_.trim_memory_interval_ms));
}

Engine::~Engine() = default;

MatrixSummary Engine::add_matrix(CsrMatrix<double> matrix, Precision precision, std::string name) {
  auto resident = std::make_shared<Resident>();
  resident->features = extract_features(matrix);
  resident->summary = {new_matrix_handle(), std::move(name), matrix.rows, matrix.cols,
                       matrix.nnz(),        precision,       structural_fingerprint(matrix)};
  resident->host = std::move(matrix);
  resident->reserved_bytes = csr_bytes_estimate(resident->features, precision);

  std::unique_lock lock(residents_mutex_);
  if (reserved_bytes_ + resident->reserved_bytes > config_.memory_budget_bytes)
    throw Error(ErrorCode::resource_exhausted,
                "matrix needs about " + to_string(resident->reserved_bytes) +
                    " device bytes; " + to_string(reserved_bytes_) + " of the " +
                    to_string(config_.memory_budget_bytes) +
                    "-byte memory budget are in use (release matrices or raise "
                    "--memory-budget-bytes)");
  reserved_bytes_ += resident->reserved_bytes;
  residents_[resident->summary.handle] = resident;
  spdlog::info("matrix {} '{}' resident: {} x {}, {} nonzeros, {}, fingerprint {}",
               resident->summary.handle, resident->summary.name, resident->summary.rows,
               resident->summary.cols, resident->summary.nnz, to_string(precision),
               resident->summary.fingerprint.hex());
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

std::optional<Plan> Engine::cached_plan(const Resident& m) {
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

void Engine::build_operator(Resident& m, const Plan& plan) {
  const FormatEntry* entry = registry_.find(plan.format);
  const Candidate candidate{plan.format, plan.params, plan.launch};
  m.op.reset();  // free the old format before building the new one
  m.op = entry->build(m.host, m.summary.precision, candidate, device_);
  m.plan = plan;
  const std::size_t vb = value_bytes(m.summary.precision);
  if (!m.x.data() && !m.y.data()) {
    m.x = DeviceBuffer(device_, static_cast<std::size_t>(m.summary.cols) * vb);
    m.y = DeviceBuffer(device_, static_cast<std::size_t>(m.summary.rows) * vb);
  }
  const std::uint64_t vectors = m.x.bytes() + m.y.bytes();
  std::unique_lock lock(residents_mutex_);
  reserved_bytes_ = reserved_bytes_ - m.reserved_bytes + m.op->device_bytes() + vectors;
  m.reserved_bytes = m.op->device_bytes() + vectors;
}

TuneOutcome Engine::ensure_plan(Resident& m, bool force) {
  const auto start = std::chrono::steady_clock::now();
  TuneOutcome outcome;
  std::lock_guard device_lock(device_mutex_);
  // A forced re-tune replaces the stored plan even when it measures slower (plan_store.hpp).
  if (force) forget_plan(plan_key(m));
  std::optional<Plan> plan = force ? std::nullopt : cached_plan(m);
  outcome.cache_hit = plan.has_value();
  if (!plan) {
    TunerOptions options = config_.tuner;
    const std::uint64_t others = bytes_in_use_by_others(m);
    // Formats may outgrow their estimate, so the others can exceed the budget: then nothing is left.
    options.memory_budget_bytes =
        others < config_.memory_budget_bytes ? config_.memory_budget_bytes - others : 0;
    m.op.reset();  // the tuner may use the memory the current format holds
    const auto models = predictor_for(m.summary.precision);
    plan = tune_matrix(registry_, device_, m.host, m.features, m.summary.precision, options,
                       models.get());
    const PlanKey key = plan_key(m);
    try {
      plans_.put(key, *plan);
    } catch (const Error& e) {
      spdlog::warn("could not store the plan for {}: {}", m.summary.fingerprint.hex(), e.what());
    }
  }
  build_operator(m, *plan);
  outcome.plan = *plan;
  outcome.tune_ms = elapsed_ms(start);
  {
    std::lock_guard lock(counters_mutex_);
    if (outcome.cache_hit) {
      ++counters_.plan_cache_hits;
    } else {
      ++counters_.plan_cache_misses;
      counters_.tuning_ms_total += outcome.tune_ms;
      if (plan->measured_ms > 0.0)
        counters_.tuning_spmv_equivalents_total += outcome.tune_ms / plan->measured_ms;
    }
  }
  spdlog::info("matrix {}: plan {} [{}] [{}] {:.4f} ms ({}, {:.1f} ms)", m.summary.handle,
               plan->format_name, to_string(plan->params),
               to_string(plan->launch), plan->measured_ms,
               outcome.cache_hit ? "cache hit" : "tuned", outcome.tune_ms);
  return outcome;
}

TuneOutcome Engine::tune(const std::string& handle, bool force) {
  auto m = find(handle);
  std::lock_guard lock(m->mutex);
  if (m->op && !force) return {*m->plan, true, 0.0};
  return ensure_plan(*m, force);
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

  std::lock_guard lock(m->mutex);
  if (!m->op) ensure_plan(*m, false);

  MultiplyOutcome outcome;
  outcome.plan = *m->plan;
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
  // The plan is guarded by the matrix's own lock, which a tuning holds for seconds: a matrix
  // being tuned shows no format yet rather than stalling the snapshot.
  for (std::size_t i = 0; i < residents.size(); ++i) {
    std::unique_lock lock(residents[i]->mutex, std::try_to_lock);
    if (lock.owns_lock() && residents[i]->plan) out.matrices[i].format = residents[i]->plan->format_name;
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
