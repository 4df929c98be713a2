#pragma once
// Counters of the plan cache's tiers (TieredPlanStore), for the metrics endpoint and for
// operators (docs/OPERATIONS.md "Plan cache and cluster" says what to alert on). Plain atomics:
// any thread reads them at any time without a lock; each value is exact, the set is not a
// snapshot. Counters only grow; the gauges (outbox_size, cluster_available) go both ways.

#include <atomic>
#include <cstdint>

namespace spmvd {

struct StoreStats {
  // Plan lookups (find), per tier. A local miss goes on to the cluster tier when one is
  // configured and reachable; a cluster hit is then copied to the local tier.
  std::atomic<std::uint64_t> local_hits{0};
  std::atomic<std::uint64_t> local_misses{0};
  std::atomic<std::uint64_t> cluster_hits{0};
  std::atomic<std::uint64_t> cluster_misses{0};

  // The cluster tier. cluster_errors counts every operation that failed on it;
  // cluster_unavailable counts outages (reachable -> unreachable, each logged once).
  std::atomic<bool> cluster_configured{false};
  std::atomic<bool> cluster_available{false};
  std::atomic<std::uint64_t> cluster_errors{0};
  std::atomic<std::uint64_t> cluster_unavailable{0};

  // Writes the cluster has not received yet (plans and calibrations), durable in the local
  // SQLite file; and how many queued writes were delivered after an outage.
  std::atomic<std::uint64_t> outbox_size{0};
  std::atomic<std::uint64_t> outbox_replayed{0};
};

}  // namespace spmvd
