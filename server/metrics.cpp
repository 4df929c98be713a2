#include "server/metrics.hpp"

#include <prometheus/collectable.h>
#include <unistd.h>

#include <fstream>

#include "core/error.hpp"

namespace spmvd {
namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

ClientMetric value_metric(MetricType type, double value, std::vector<ClientMetric::Label> labels = {}) {
  ClientMetric metric;
  metric.label = std::move(labels);
  if (type == MetricType::Counter) metric.counter.value = value;
  else metric.gauge.value = value;
  return metric;
}

MetricFamily single(const char* name, const char* help, MetricType type, double value) {
  return {name, help, type, {value_metric(type, value)}};
}

ClientMetric latency_histogram(const RpcMethodStats& rpc) {
  ClientMetric metric;
  metric.label = {{"method", rpc.method}};
  metric.histogram.sample_count = rpc.calls;
  metric.histogram.sample_sum = rpc.latency_sum_s;
  std::uint64_t cumulative = 0;
  for (std::size_t i = 0; i < kRpcLatencyBucketsS.size(); ++i) {
    cumulative += rpc.latency_buckets[i];
    metric.histogram.bucket.push_back({cumulative, kRpcLatencyBucketsS[i]});
  }
  metric.histogram.bucket.push_back({rpc.calls, std::numeric_limits<double>::infinity()});
  return metric;
}

}  // namespace

std::vector<MetricFamily> daemon_metric_families(const EngineStats& engine,
                                                 const std::vector<RpcMethodStats>& rpcs,
                                                 const StoreStats& store,
                                                 std::uint64_t resident_bytes) {
  MetricFamily requests{"spmvd_rpc_requests_total", "gRPC calls by method and status code",
                        MetricType::Counter, {}};
  MetricFamily latency{"spmvd_rpc_latency_seconds",
                       "gRPC call latency, from arrival to status, by method",
                       MetricType::Histogram, {}};
  MetricFamily received{"spmvd_rpc_received_bytes_total",
                        "serialised request bytes received, by method", MetricType::Counter, {}};
  double upload_bytes = 0.0;
  for (const RpcMethodStats& rpc : rpcs) {
    for (const auto& [code, calls] : rpc.by_code)
      requests.metric.push_back(value_metric(MetricType::Counter, static_cast<double>(calls),
                                             {{"code", code}, {"method", rpc.method}}));
    latency.metric.push_back(latency_histogram(rpc));
    received.metric.push_back(value_metric(MetricType::Counter,
                                           static_cast<double>(rpc.received_bytes),
                                           {{"method", rpc.method}}));
    if (rpc.method == "/spmvd.v1.Spmv/Upload") upload_bytes = static_cast<double>(rpc.received_bytes);
  }
  const EngineCounters& c = engine.counters;
  std::vector<MetricFamily> families{
      std::move(requests), std::move(latency), std::move(received),
      single("spmvd_upload_bytes_total", "bytes received by Upload (all chunks)",
             MetricType::Counter, upload_bytes),
      single("spmvd_plan_cache_hits_total", "tunings answered by the plan cache",
             MetricType::Counter, static_cast<double>(c.plan_cache_hits)),
      single("spmvd_plan_cache_misses_total", "tunings that measured candidates",
             MetricType::Counter, static_cast<double>(c.plan_cache_misses)),
      single("spmvd_tuning_seconds_total", "wall time spent tuning (cache misses)",
             MetricType::Counter, c.tuning_ms_total / 1000.0),
      single("spmvd_tuning_spmv_equivalents_total",
             "tuning time divided by the chosen plan's multiply time, summed over tunings",
             MetricType::Counter, c.tuning_spmv_equivalents_total),
      single("spmvd_matrices_released_total", "matrices released", MetricType::Counter,
             static_cast<double>(c.matrices_released)),
      single("spmvd_memory_trims_total", "malloc_trim runs after releases", MetricType::Counter,
             static_cast<double>(c.memory_trims)),
      single("spmvd_resident_matrices", "matrices resident now", MetricType::Gauge,
             static_cast<double>(engine.matrices.size())),
      single("spmvd_resident_device_bytes", "device bytes the resident matrices hold",
             MetricType::Gauge, static_cast<double>(engine.resident_device_bytes)),
      single("spmvd_memory_budget_bytes", "device bytes resident matrices may hold",
             MetricType::Gauge, static_cast<double>(engine.memory_budget_bytes)),
      single("spmvd_process_resident_memory_bytes", "host memory resident (VmRSS)",
             MetricType::Gauge, static_cast<double>(resident_bytes)),
      single("spmvd_models_calibrated", "1 when calibrated performance models rank candidates",
             MetricType::Gauge, engine.calibrated ? 1.0 : 0.0),
      single("spmvd_calibration_running", "1 while a calibration holds the device",
             MetricType::Gauge, engine.calibrating ? 1.0 : 0.0),
      single("spmvd_cluster_store_configured", "1 when a cluster-wide plan store is configured",
             MetricType::Gauge, store.cluster_configured ? 1.0 : 0.0),
  };
  MetricFamily store_hits{"spmvd_plan_store_hits_total", "plan lookups answered, by store tier",
                          MetricType::Counter, {}};
  MetricFamily store_misses{"spmvd_plan_store_misses_total",
                            "plan lookups not answered, by store tier", MetricType::Counter, {}};
  const auto add_tier = [&](const char* tier, std::uint64_t hits, std::uint64_t misses) {
    store_hits.metric.push_back(
        value_metric(MetricType::Counter, static_cast<double>(hits), {{"tier", tier}}));
    store_misses.metric.push_back(
        value_metric(MetricType::Counter, static_cast<double>(misses), {{"tier", tier}}));
  };
  add_tier("local", store.local_hits, store.local_misses);
  // The cluster tier's families only with a cluster store: absent otherwise, so
  // `spmvd_cluster_store_up == 0` alerts only on outages.
  if (store.cluster_configured) {
    add_tier("cluster", store.cluster_hits, store.cluster_misses);
    families.push_back(single("spmvd_cluster_store_up", "1 when the cluster plan store answers",
                              MetricType::Gauge, store.cluster_available ? 1.0 : 0.0));
    families.push_back(single("spmvd_cluster_store_outages_total",
                              "times the cluster plan store became unreachable",
                              MetricType::Counter, static_cast<double>(store.cluster_unavailable)));
    families.push_back(single("spmvd_cluster_store_errors_total",
                              "cluster plan store operations that failed", MetricType::Counter,
                              static_cast<double>(store.cluster_errors)));
    families.push_back(single("spmvd_cluster_store_outbox_writes",
                              "writes queued locally that the cluster store has not received",
                              MetricType::Gauge, static_cast<double>(store.outbox_size)));
    families.push_back(single("spmvd_cluster_store_outbox_delivered_total",
                              "queued writes delivered to the cluster store after outages",
                              MetricType::Counter, static_cast<double>(store.outbox_replayed)));
  }
  families.push_back(std::move(store_hits));
  families.push_back(std::move(store_misses));
  return families;
}

std::uint64_t process_resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  std::uint64_t size_pages = 0, resident_pages = 0;
  if (!(statm >> size_pages >> resident_pages)) return 0;
  return resident_pages * static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
}

class MetricsEndpoint::Collector final : public prometheus::Collectable {
 public:
  Collector(const Engine& engine, const RpcMetrics& rpcs, const StoreStats& store)
      : engine_(engine), rpcs_(rpcs), store_(store) {}
  std::vector<MetricFamily> Collect() const override {
    return daemon_metric_families(engine_.stats(), rpcs_.snapshot(), store_,
                                  process_resident_bytes());
  }

 private:
  const Engine& engine_;
  const RpcMetrics& rpcs_;
  const StoreStats& store_;
};

MetricsEndpoint::MetricsEndpoint(const std::string& listen_address, const Engine& engine,
                                 const RpcMetrics& rpcs, const StoreStats& store)
    : collector_(std::make_shared<Collector>(engine, rpcs, store)) {
  try {
    exposer_ = std::make_unique<prometheus::Exposer>(listen_address, 2);
  } catch (const std::exception& e) {
    throw Error(ErrorCode::unavailable,
                "cannot serve metrics on " + listen_address + " (" + e.what() +
                    "); choose another --metrics-listen, or \"\" for none");
  }
  exposer_->RegisterCollectable(collector_);
}

MetricsEndpoint::~MetricsEndpoint() = default;

int MetricsEndpoint::port() const {
  const auto ports = exposer_->GetListeningPorts();
  return ports.empty() ? 0 : ports.front();
}

}  // namespace spmvd
