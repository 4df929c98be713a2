// The metric families of a scrape, serialised as Prometheus text exactly as the endpoint does.

#include "server/metrics.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <prometheus/text_serializer.h>

namespace spmvd {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string exposition(const EngineStats& engine, const std::vector<RpcMethodStats>& rpcs,
                       const StoreStats& store) {
  return prometheus::TextSerializer().Serialize(daemon_metric_families(engine, rpcs, store, 4096));
}

std::string exposition(const StoreStats& store) { return exposition({}, {}, store); }

// What a TieredPlanStore with a cluster tier reports after an outage it recovered from.
void fill_after_recovered_outage(StoreStats& store) {
  store.local_hits = 7;
  store.local_misses = 3;
  store.cluster_hits = 2;
  store.cluster_misses = 1;
  store.cluster_configured = true;
  store.cluster_available = true;
  store.cluster_errors = 5;
  store.cluster_unavailable = 1;
  store.outbox_size = 0;
  store.outbox_replayed = 4;
}

TEST(DaemonMetrics, RpcCallsBecomeCountersAndAHistogramPerMethod) {
  RpcMetrics rpcs;
  rpcs.record("/spmvd.v1.Spmv/Upload", grpc::StatusCode::OK, 0.003, 1000);
  rpcs.record("/spmvd.v1.Spmv/Upload", grpc::StatusCode::INVALID_ARGUMENT, 0.2, 24);
  const std::string text = exposition({}, rpcs.snapshot(), StoreStats{});
  EXPECT_THAT(text, HasSubstr(R"(spmvd_rpc_requests_total{code="OK",method="/spmvd.v1.Spmv/Upload"} 1)"));
  EXPECT_THAT(text, HasSubstr(R"(spmvd_rpc_requests_total{code="INVALID_ARGUMENT",method="/spmvd.v1.Spmv/Upload"} 1)"));
  EXPECT_THAT(text, HasSubstr(R"(spmvd_rpc_latency_seconds_bucket{method="/spmvd.v1.Spmv/Upload",le="0.005"} 1)"));
  EXPECT_THAT(text, HasSubstr(R"(spmvd_rpc_latency_seconds_bucket{method="/spmvd.v1.Spmv/Upload",le="0.25"} 2)"));
  EXPECT_THAT(text, HasSubstr(R"(spmvd_rpc_latency_seconds_count{method="/spmvd.v1.Spmv/Upload"} 2)"));
  EXPECT_THAT(text, HasSubstr("spmvd_upload_bytes_total 1024"));
}

TEST(DaemonMetrics, EngineStateBecomesGaugesAndCounters) {
  EngineStats engine;
  engine.matrices.resize(2);
  engine.resident_device_bytes = 5000;
  engine.counters.plan_cache_hits = 3;
  engine.counters.plan_cache_misses = 1;
  engine.counters.tuning_ms_total = 1500;
  engine.counters.tuning_spmv_equivalents_total = 6000;
  engine.calibrated = true;
  const std::string text = exposition(engine, {}, StoreStats{});
  EXPECT_THAT(text, HasSubstr("spmvd_resident_matrices 2"));
  EXPECT_THAT(text, HasSubstr("spmvd_resident_device_bytes 5000"));
  EXPECT_THAT(text, HasSubstr("spmvd_plan_cache_hits_total 3"));
  EXPECT_THAT(text, HasSubstr("spmvd_plan_cache_misses_total 1"));
  EXPECT_THAT(text, HasSubstr("spmvd_tuning_seconds_total 1.5"));
  EXPECT_THAT(text, HasSubstr("spmvd_tuning_spmv_equivalents_total 6000"));
  EXPECT_THAT(text, HasSubstr("spmvd_models_calibrated 1"));
  EXPECT_THAT(text, HasSubstr("spmvd_process_resident_memory_bytes 4096"));
}

TEST(DaemonMetrics, ClusterStoreUpIsExportedOnlyWhenConfigured) {
  StoreStats store;
  EXPECT_THAT(exposition(store),
              AllOf(HasSubstr("spmvd_cluster_store_configured 0"), Not(HasSubstr("spmvd_cluster_store_up"))));
  store.cluster_configured = true;
  EXPECT_THAT(exposition(store),
              AllOf(HasSubstr("spmvd_cluster_store_configured 1"), HasSubstr("spmvd_cluster_store_up 0")));
  store.cluster_available = true;
  EXPECT_THAT(exposition(store), HasSubstr("spmvd_cluster_store_up 1"));
}

TEST(DaemonMetrics, PlanStoreLookupsAreCountedPerTier) {
  StoreStats store;
  fill_after_recovered_outage(store);
  const std::string text = exposition(store);
  EXPECT_THAT(text, HasSubstr(R"(spmvd_plan_store_hits_total{tier="local"} 7)"));
  EXPECT_THAT(text, HasSubstr(R"(spmvd_plan_store_misses_total{tier="local"} 3)"));
  EXPECT_THAT(text, HasSubstr(R"(spmvd_plan_store_hits_total{tier="cluster"} 2)"));
  EXPECT_THAT(text, HasSubstr(R"(spmvd_plan_store_misses_total{tier="cluster"} 1)"));
}

TEST(DaemonMetrics, ClusterStoreOutagesErrorsAndOutboxAreExported) {
  StoreStats store;
  fill_after_recovered_outage(store);
  const std::string text = exposition(store);
  EXPECT_THAT(text, HasSubstr("spmvd_cluster_store_outages_total 1"));
  EXPECT_THAT(text, HasSubstr("spmvd_cluster_store_errors_total 5"));
  EXPECT_THAT(text, HasSubstr("spmvd_cluster_store_outbox_writes 0"));
  EXPECT_THAT(text, HasSubstr("spmvd_cluster_store_outbox_delivered_total 4"));

  store.cluster_available = false;
  store.outbox_size = 2;
  EXPECT_THAT(exposition(store), HasSubstr("spmvd_cluster_store_outbox_writes 2"));
}

TEST(DaemonMetrics, WithoutAClusterStoreOnlyTheLocalTierIsExported) {
  StoreStats store;
  store.local_hits = 1;
  store.local_misses = 2;
  const std::string text = exposition(store);
  EXPECT_THAT(text, HasSubstr(R"(spmvd_plan_store_hits_total{tier="local"} 1)"));
  EXPECT_THAT(text, HasSubstr(R"(spmvd_plan_store_misses_total{tier="local"} 2)"));
  EXPECT_THAT(text, Not(HasSubstr(R"(tier="cluster")")));
  EXPECT_THAT(text, Not(HasSubstr("spmvd_cluster_store_outages_total")));
  EXPECT_THAT(text, Not(HasSubstr("spmvd_cluster_store_outbox")));
}

TEST(ProcessResidentBytes, IsNonZeroForThisProcess) { EXPECT_GT(process_resident_bytes(), 0u); }

}  // namespace
}  // namespace spmvd
