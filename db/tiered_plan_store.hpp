#pragma once
// The daemon's plan store: a local tier (SQLite, this daemon's file) in front of an optional
// cluster tier (PostgreSQL shared by every daemon; docs/OPERATIONS.md "Plan cache and cluster").
//
// Reads go to the local tier first, then to the cluster tier; a cluster hit is copied to the
// local tier. Writes go to both. The cluster is an optimisation on top of an optimisation:
// when it fails the daemon goes on with the local tier alone —
//   - the first failure of an outage is logged once (warning) and counted
//     (StoreStats::cluster_unavailable); later operations skip the cluster instead of waiting
//     on it;
//   - each write the cluster missed is queued in a durable outbox in the local SQLite file
//     (SqliteOutbox), which survives a restart;
//   - a background thread retries with exponential backoff (retry_initial_ms doubling up to
//     retry_max_ms), and once the cluster answers it delivers the outbox (what the local tier
//     holds for each queued key) and reads and writes go to the cluster again.
// Erases apply to the tiers reachable at the time and are not queued: a plan erased during an
// outage stays in the cluster (the next put of its key may still replace it there).
//
// Errors: the cluster tier never throws to the caller. The local tier's errors are logged;
// find treats them as a miss, put throws only when no tier stored the plan.
// Thread safety: every method from any thread.

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "db/plan_store.hpp"
#include "db/sqlite_outbox.hpp"
#include "db/store_stats.hpp"

namespace spmvd {

struct TieredPlanStoreOptions {
  std::string cluster_name;            // for logs, without a password (redact_url_password)
  std::uint32_t retry_initial_ms = 500;  // first wait after a cluster failure
  std::uint32_t retry_max_ms = 30000;    // the backoff's ceiling; also how often the outbox is
                                         // rechecked while the cluster is healthy
};

// Opens the cluster store; throws Error (or another std::exception) when it cannot.
using ClusterStoreOpener = std::function<std::unique_ptr<PlanStore>()>;

class TieredPlanStore final : public PlanStore {
 public:
  // The local tier alone (no cluster configured): counts local hits and misses.
  explicit TieredPlanStore(std::unique_ptr<PlanStore> local);
  // Both tiers. open_cluster is tried once here (a failure is logged, not thrown) and then by
  // the retry thread until it succeeds; outbox must be on the local tier's SQLite file.
  TieredPlanStore(std::unique_ptr<PlanStore> local, std::unique_ptr<SqliteOutbox> outbox,
                  ClusterStoreOpener open_cluster, TieredPlanStoreOptions options);
  // Stops the retry thread (waits for an attempt in flight, at most the cluster's connect
  // timeout). What is still queued stays in the outbox for the next start.
  ~TieredPlanStore() override;
  TieredPlanStore(const TieredPlanStore&) = delete;
  TieredPlanStore& operator=(const TieredPlanStore&) = delete;

  std::optional<Plan> find(const PlanKey& key) override;
  // Throws Error(invalid_argument) for a plan that disagrees with its key (as every backend).
  void put(const PlanKey& key, const Plan& plan) override;
  // True when a row was deleted in either tier.
  bool erase(const PlanKey& key) override;
  // Plans of both tiers, one per key (the local copy where both hold one), newest first.
  std::vector<StoredPlan> list(std::size_t limit) override;
  // The larger of the two tiers' counts.
  std::size_t erase_all_for_device(const std::string& device_signature) override;

  void put_calibration(const std::string& device_signature, std::uint32_t model_version,
                       const std::string& model_json) override;
  std::optional<std::string> find_calibration(const std::string& device_signature,
                                              std::uint32_t model_version) override;
  std::vector<StoredCalibration> list_calibrations() override;

  void put_samples(const std::vector<MeasurementSample>& samples,
                   std::size_t keep_per_format) override;
  std::vector<MeasurementSample> list_samples(const std::string& device_signature,
                                              Precision precision) override;

  const StoreStats& stats() const { return stats_; }

  // One retry attempt now, as the background thread makes them: open the cluster if needed,
  // check that it answers, deliver the outbox. True when the cluster answered and the outbox
  // is empty. (The thread calls this; tests and an operator command may too.)
  bool sync_with_cluster();

 private:
  std::shared_ptr<PlanStore> usable_cluster();
  void cluster_failed(const std::exception& e, const std::string& what);
  void queue_plan(const PlanKey& key);
  void queue_calibration(const std::string& device_signature, std::uint32_t model_version);
  void refresh_outbox_size();
  // Delivers the outbox to cluster; false when the local tier failed (the cluster's failures
  // throw).
  bool replay(PlanStore& cluster);
  void retry_loop();

  std::unique_ptr<PlanStore> local_;
  std::unique_ptr<SqliteOutbox> outbox_;
  ClusterStoreOpener open_cluster_;
  TieredPlanStoreOptions options_;
  StoreStats stats_;

  std::mutex cluster_mutex_;  // guards cluster_ (set by the retry thread, read by all)
  std::shared_ptr<PlanStore> cluster_;
  std::mutex sync_mutex_;  // one sync_with_cluster at a time

  std::mutex loop_mutex_;
  std::condition_variable loop_wake_;
  bool stopping_ = false;
  bool wake_ = false;
  std::thread retry_thread_;
};

}  // namespace spmvd
