#include "db/tiered_plan_store.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <set>
#include <tuple>

#include "core/error.hpp"

namespace spmvd {
namespace {

// Outbox entries delivered per read of the outbox: bounds memory, not the total.
constexpr std::size_t kReplayBatch = 256;

// A calibration key that no daemon writes: looking it up proves the cluster answers without
// moving a real calibration's JSON across the network.
constexpr const char* kProbeDevice = "spmvd-reachability-probe";

auto key_tuple(const PlanKey& k) {
  return std::make_tuple(k.fingerprint.high, k.fingerprint.low, k.device_signature, k.precision,
                         k.tuner_version, k.model_version);
}

}  // namespace

TieredPlanStore::TieredPlanStore(std::unique_ptr<PlanStore> local) : local_(std::move(local)) {}

TieredPlanStore::TieredPlanStore(std::unique_ptr<PlanStore> local,
                                 std::unique_ptr<SqliteOutbox> outbox,
                                 ClusterStoreOpener open_cluster, TieredPlanStoreOptions options)
    : local_(std::move(local)),
      outbox_(std::move(outbox)),
      open_cluster_(std::move(open_cluster)),
      options_(std::move(options)) {
  stats_.cluster_configured = true;
  // Presumed reachable, so that failing to reach it now is an outage like any other: logged
  // once and counted.
  stats_.cluster_available = true;
  refresh_outbox_size();
  if (stats_.outbox_size > 0) {
    spdlog::info("cluster plan store {}: {} writes queued by an earlier run will be delivered",
                 options_.cluster_name, stats_.outbox_size.load());
  }
  sync_with_cluster();
  retry_thread_ = std::thread([this] { retry_loop(); });
}

TieredPlanStore::~TieredPlanStore() {
  {
    std::lock_guard lock(loop_mutex_);
    stopping_ = true;
  }
  loop_wake_.notify_all();
  if (retry_thread_.joinable()) retry_thread_.join();
}

// ---- plans -----------------------------------------------------------------------------------

std::optional<Plan> TieredPlanStore::find(const PlanKey& key) {
  std::optional<Plan> plan;
  try {
    plan = local_->find(key);
  } catch (const Error& e) {
    spdlog::warn("local plan store: lookup of {} failed, trying the cluster: {}", to_string(key),
                 e.what());
  }
  if (plan) {
    ++stats_.local_hits;
    return plan;
  }
  ++stats_.local_misses;
  const auto cluster = usable_cluster();
  if (!cluster) return std::nullopt;
  try {
    plan = cluster->find(key);
  } catch (const std::exception& e) {
    cluster_failed(e, "find plan");
    return std::nullopt;
  }
  if (!plan) {
    ++stats_.cluster_misses;
    return std::nullopt;
  }
  ++stats_.cluster_hits;
  try {
    local_->put(key, *plan);
  } catch (const Error& e) {
    spdlog::warn("local plan store: could not copy the cluster's plan {}: {}", to_string(key),
                 e.what());
  }
  return plan;
}

void TieredPlanStore::put(const PlanKey& key, const Plan& plan) {
  std::optional<Error> local_error;
  try {
    local_->put(key, plan);
  } catch (const Error& e) {
    if (e.code() == ErrorCode::invalid_argument) throw;  // the caller's mistake, in every tier
    local_error = e;
    spdlog::warn("local plan store: could not store {}: {}", to_string(key), e.what());
  }
  if (!open_cluster_) {
    if (local_error) throw *local_error;
    return;
  }
  if (const auto cluster = usable_cluster()) {
    try {
      cluster->put(key, plan);
      return;
    } catch (const std::exception& e) {
      cluster_failed(e, "put plan");
    }
  }
  // The outbox stands for the local row: without one there is nothing to deliver later.
  if (local_error) throw *local_error;
  queue_plan(key);
}

bool TieredPlanStore::erase(const PlanKey& key) {
  bool erased = false;
  try {
    erased = local_->erase(key);
    if (outbox_) outbox_->discard_plan(key);
    refresh_outbox_size();
  } catch (const Error& e) {
    spdlog::warn("local plan store: could not erase {}: {}", to_string(key), e.what());
  }
  if (const auto cluster = usable_cluster()) {
    try {
      erased = cluster->erase(key) || erased;
    } catch (const std::exception& e) {
      cluster_failed(e, "erase plan");
    }
  }
  return erased;
}

std::vector<StoredPlan> TieredPlanStore::list(std::size_t limit) {
  std::vector<StoredPlan> plans;
  try {
    plans = local_->list(limit);
  } catch (const Error& e) {
    spdlog::warn("local plan store: could not list plans: {}", e.what());
  }
  if (const auto cluster = usable_cluster()) {
    try {
      std::set<decltype(key_tuple(PlanKey{}))> seen;
      for (const StoredPlan& stored : plans) seen.insert(key_tuple(stored.key));
      for (StoredPlan& stored : cluster->list(limit)) {
        if (seen.insert(key_tuple(stored.key)).second) plans.push_back(std::move(stored));
      }
    } catch (const std::exception& e) {
      cluster_failed(e, "list plans");
    }
  }
  std::stable_sort(plans.begin(), plans.end(), [](const StoredPlan& a, const StoredPlan& b) {
    return a.updated_ms > b.updated_ms;
  });
  if (plans.size() > limit) plans.resize(limit);
  return plans;
}

std::size_t TieredPlanStore::erase_all_for_device(const std::string& device_signature) {
  std::size_t erased = 0;
  try {
    erased = local_->erase_all_for_device(device_signature);
    if (outbox_) outbox_->discard_device(device_signature);
    refresh_outbox_size();
  } catch (const Error& e) {
    spdlog::warn("local plan store: could not erase the plans of '{}': {}", device_signature,
                 e.what());
  }
  if (const auto cluster = usable_cluster()) {
    try {
      erased = std::max(erased, cluster->erase_all_for_device(device_signature));
    } catch (const std::exception& e) {
      cluster_failed(e, "erase plans of a device");
    }
  }
  return erased;
}

// ---- calibrations ----------------------------------------------------------------------------

void TieredPlanStore::put_calibration(const std::string& device_signature,
                                      std::uint32_t model_version, const std::string& model_json) {
  std::optional<Error> local_error;
  try {
    local_->put_calibration(device_signature, model_version, model_json);
  } catch (const Error& e) {
    local_error = e;
    spdlog::warn("local plan store: could not store the calibration of '{}': {}",
                 device_signature, e.what());
  }
  if (!open_cluster_) {
    if (local_error) throw *local_error;
    return;
  }
  if (const auto cluster = usable_cluster()) {
    try {
      cluster->put_calibration(device_signature, model_version, model_json);
      return;
    } catch (const std::exception& e) {
      cluster_failed(e, "put calibration");
    }
  }
  if (local_error) throw *local_error;
  queue_calibration(device_signature, model_version);
}

std::optional<std::string> TieredPlanStore::find_calibration(const std::string& device_signature,
                                                             std::uint32_t model_version) {
  std::optional<std::string> json;
  try {
    json = local_->find_calibration(device_signature, model_version);
  } catch (const Error& e) {
    spdlog::warn("local plan store: calibration lookup failed, trying the cluster: {}", e.what());
  }
  if (json) return json;
  const auto cluster = usable_cluster();
  if (!cluster) return std::nullopt;
  try {
    json = cluster->find_calibration(device_signature, model_version);
  } catch (const std::exception& e) {
    cluster_failed(e, "find calibration");
    return std::nullopt;
  }
  if (json) {
    try {
      local_->put_calibration(device_signature, model_version, *json);
    } catch (const Error& e) {
      spdlog::warn("local plan store: could not copy the cluster's calibration: {}", e.what());
    }
  }
  return json;
}

std::vector<StoredCalibration> TieredPlanStore::list_calibrations() {
  std::vector<StoredCalibration> calibrations;
  try {
    calibrations = local_->list_calibrations();
  } catch (const Error& e) {
    spdlog::warn("local plan store: could not list calibrations: {}", e.what());
  }
  if (const auto cluster = usable_cluster()) {
    try {
      std::set<std::pair<std::string, std::uint32_t>> seen;
      for (const auto& c : calibrations) seen.emplace(c.device_signature, c.model_version);
      for (StoredCalibration& c : cluster->list_calibrations()) {
        if (seen.emplace(c.device_signature, c.model_version).second) {
          calibrations.push_back(std::move(c));
        }
      }
    } catch (const std::exception& e) {
      cluster_failed(e, "list calibrations");
    }
  }
  std::sort(calibrations.begin(), calibrations.end(),
            [](const StoredCalibration& a, const StoredCalibration& b) {
              return std::tie(a.device_signature, a.model_version) <
                     std::tie(b.device_signature, b.model_version);
            });
  return calibrations;
}

// ---- samples ---------------------------------------------------------------------------------
// Written to both tiers like plans, but a sample the cluster misses during an outage is not
// queued in the outbox: samples are statistics, the local tier keeps them, and the next
// tunings add more (docs/TUNER.md "Samples").

void TieredPlanStore::put_samples(const std::vector<MeasurementSample>& samples,
                                  std::size_t keep_per_format) {
  std::optional<Error> local_error;
  try {
    local_->put_samples(samples, keep_per_format);
  } catch (const Error& e) {
    if (e.code() == ErrorCode::invalid_argument) throw;  // the samples', not the store's fault
    local_error = e;
    spdlog::warn("local plan store: could not store {} samples: {}", samples.size(), e.what());
  }
  if (const auto cluster = open_cluster_ ? usable_cluster() : nullptr) {
    try {
      cluster->put_samples(samples, keep_per_format);
      return;
    } catch (const std::exception& e) {
      cluster_failed(e, "put samples");
    }
  }
  if (local_error) throw *local_error;
}

// The cluster's when it answers (it holds every daemon's samples of this device, this one's
// included), else the local tier's.
std::vector<MeasurementSample> TieredPlanStore::list_samples(const std::string& device_signature,
                                                             Precision precision) {
  if (const auto cluster = usable_cluster()) {
    try {
      return cluster->list_samples(device_signature, precision);
    } catch (const std::exception& e) {
      cluster_failed(e, "list samples");
    }
  }
  return local_->list_samples(device_signature, precision);
}

// ---- the cluster tier's health ---------------------------------------------------------------

std::shared_ptr<PlanStore> TieredPlanStore::usable_cluster() {
  // While the cluster is down, operations skip it rather than each wait for a connect timeout;
  // the retry thread finds out when it is back.
  if (!stats_.cluster_available) return nullptr;
  std::lock_guard lock(cluster_mutex_);
  return cluster_;
}

void TieredPlanStore::cluster_failed(const std::exception& e, const std::string& what) {
  ++stats_.cluster_errors;
  if (stats_.cluster_available.exchange(false)) {
    ++stats_.cluster_unavailable;
    spdlog::warn(
        "cluster plan store {} unavailable ({}: {}); serving from the local plan store and "
        "queueing writes for it until it answers again",
        options_.cluster_name, what, e.what());
    {
      std::lock_guard lock(loop_mutex_);
      wake_ = true;
    }
    loop_wake_.notify_all();
  } else {
    spdlog::debug("cluster plan store {}: {} failed: {}", options_.cluster_name, what, e.what());
  }
}

void TieredPlanStore::queue_plan(const PlanKey& key) {
  try {
    outbox_->queue_plan(key);
  } catch (const Error& e) {
    spdlog::error("plan {} is stored locally only: the outbox could not queue it for the "
                  "cluster: {}",
                  to_string(key), e.what());
  }
  refresh_outbox_size();
}

void TieredPlanStore::queue_calibration(const std::string& device_signature,
                                        std::uint32_t model_version) {
  try {
    outbox_->queue_calibration(device_signature, model_version);
  } catch (const Error& e) {
    spdlog::error("calibration of '{}' is stored locally only: the outbox could not queue it "
                  "for the cluster: {}",
                  device_signature, e.what());
  }
  refresh_outbox_size();
}

void TieredPlanStore::refresh_outbox_size() {
  if (!outbox_) return;
  try {
    stats_.outbox_size = outbox_->size();
  } catch (const Error& e) {
    spdlog::warn("plan store outbox: cannot count its entries: {}", e.what());
  }
}

bool TieredPlanStore::sync_with_cluster() {
  if (!open_cluster_) return false;
  std::lock_guard sync_lock(sync_mutex_);
  std::shared_ptr<PlanStore> cluster;
  {
    std::lock_guard lock(cluster_mutex_);
    cluster = cluster_;
  }
  const bool was_available = stats_.cluster_available;
  bool opened = false;
  const char* step = "connect";
  try {
    if (!cluster) {
      cluster = std::shared_ptr<PlanStore>(open_cluster_());
      opened = true;
      std::lock_guard lock(cluster_mutex_);
      cluster_ = cluster;
    }
    // Opening proves the server answers; an open store whose server went away needs asking.
    step = "check that it answers";
    if (!was_available && !opened) (void)cluster->find_calibration(kProbeDevice, 0);
    step = "deliver queued writes";
    const std::uint64_t replayed_before = stats_.outbox_replayed;
    if (!replay(*cluster)) return false;
    const bool recovered = !stats_.cluster_available.exchange(true);
    if (opened || recovered) {
      spdlog::info("cluster plan store {} {}; {} queued writes delivered", options_.cluster_name,
                   opened ? "connected" : "available again",
                   stats_.outbox_replayed - replayed_before);
    }
  } catch (const std::exception& e) {
    cluster_failed(e, step);
    return false;
  }
  return stats_.outbox_size == 0;
}

bool TieredPlanStore::replay(PlanStore& cluster) {
  // The cluster's failures are thrown to sync_with_cluster; the local tier's stop this replay
  // only, with the entries still queued for the next attempt.
  const auto local_failed = [&](const Error& e) {
    spdlog::warn("plan store outbox: delivery to the cluster paused, the local tier failed: {}",
                 e.what());
    refresh_outbox_size();
    return false;
  };
  for (;;) {
    std::vector<OutboxPlan> entries;
    try {
      entries = outbox_->plans(kReplayBatch);
    } catch (const Error& e) {
      return local_failed(e);
    }
    if (entries.empty()) break;
    for (const OutboxPlan& entry : entries) {
      std::optional<Plan> plan;  // what the local tier holds now; none when erased since
      try {
        plan = local_->find(entry.key);
      } catch (const Error& e) {
        return local_failed(e);
      }
      if (plan) cluster.put(entry.key, *plan);
      try {
        outbox_->remove_plan(entry.id);
      } catch (const Error& e) {
        return local_failed(e);
      }
      ++stats_.outbox_replayed;
    }
  }
  for (;;) {
    std::vector<OutboxCalibration> entries;
    try {
      entries = outbox_->calibrations(kReplayBatch);
    } catch (const Error& e) {
      return local_failed(e);
    }
    if (entries.empty()) break;
    for (const OutboxCalibration& entry : entries) {
      std::optional<std::string> json;
      try {
        json = local_->find_calibration(entry.device_signature, entry.model_version);
      } catch (const Error& e) {
        return local_failed(e);
      }
      if (json) cluster.put_calibration(entry.device_signature, entry.model_version, *json);
      try {
        outbox_->remove_calibration(entry.id);
      } catch (const Error& e) {
        return local_failed(e);
      }
      ++stats_.outbox_replayed;
    }
  }
  refresh_outbox_size();
  return true;
}

void TieredPlanStore::retry_loop() {
  std::uint32_t backoff_ms = options_.retry_initial_ms;
  std::unique_lock lock(loop_mutex_);
  while (!stopping_) {
    const bool pending = !stats_.cluster_available || stats_.outbox_size > 0;
    loop_wake_.wait_for(lock, std::chrono::milliseconds(pending ? backoff_ms : options_.retry_max_ms),
                        [&] { return stopping_ || wake_; });
    wake_ = false;
    if (stopping_) break;
    lock.unlock();
    const bool synced = sync_with_cluster();
    lock.lock();
    backoff_ms = synced ? options_.retry_initial_ms
                        : std::min(options_.retry_max_ms, std::max<std::uint32_t>(1, backoff_ms) * 2);
  }
}

}  // namespace spmvd
