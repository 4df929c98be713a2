#pragma once
// The Prometheus endpoint (docs/OPERATIONS.md "Metrics and what to alert on"): HTTP GET
// /metrics on its own port, served by prometheus-cpp's Exposer. Every value is read at scrape
// time from its one source (Engine::stats(), RpcMetrics, the plan store tiers' StoreStats, the
// process's resident memory), so nothing is counted twice.

#include <prometheus/exposer.h>
#include <prometheus/metric_family.h>

#include <memory>
#include <string>
#include <vector>

#include "db/store_stats.hpp"
#include "server/engine.hpp"
#include "server/rpc_metrics.hpp"

namespace spmvd {

// The metric families of one scrape; pure, for tests and for the collector below. `store` is
// the plan cache's tiers (TieredPlanStore::stats()): lookups per tier always; the cluster
// store's families (up, outages, errors, outbox) only when one is configured.
std::vector<prometheus::MetricFamily> daemon_metric_families(
    const EngineStats& engine, const std::vector<RpcMethodStats>& rpcs, const StoreStats& store,
    std::uint64_t process_resident_bytes);

// This process's resident set (VmRSS), from /proc/self/statm; 0 where unreadable.
std::uint64_t process_resident_bytes();

class MetricsEndpoint {
 public:
  // Serves on listen_address ("127.0.0.1:9464"; port 0 picks a free one). Throws
  // Error(unavailable) when the address cannot be bound. The references must outlive this.
  MetricsEndpoint(const std::string& listen_address, const Engine& engine,
                  const RpcMetrics& rpcs, const StoreStats& store);
  ~MetricsEndpoint();
  int port() const;

 private:
  class Collector;
  std::shared_ptr<Collector> collector_;
  std::unique_ptr<prometheus::Exposer> exposer_;
};

}  // namespace spmvd
