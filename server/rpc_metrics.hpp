#pragma once
// Per-RPC request counts, status codes, latencies and received bytes, fed by RpcMetricsInterceptor
// for every call of every service (Health and reflection included). Read by `spmvctl stats`
// (GetStats) and by the Prometheus endpoint (server/metrics.hpp).
//
// Thread safety: record() and snapshot() may be called from any thread (one mutex; a record is a
// map lookup and a few additions).

#include <grpcpp/support/server_interceptor.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace spmvd {

// Upper bounds (seconds) of the latency histogram's buckets: from a cached-plan multiply of a
// small matrix (well under a millisecond) to a calibration (about 90 s on an H100, MODELS.md).
inline constexpr std::array<double, 16> kRpcLatencyBucketsS{
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 120};

struct RpcMethodStats {
  std::string method;                            // "/spmvd.v1.Spmv/Multiply"
  std::map<std::string, std::uint64_t> by_code;  // "OK", "INVALID_ARGUMENT", … -> calls
  std::uint64_t calls = 0;
  std::uint64_t errors = 0;  // calls that ended with a status other than OK
  double latency_sum_s = 0.0;
  double latency_max_s = 0.0;
  // Calls with latency <= kRpcLatencyBucketsS[i], not cumulative; the last is above them all.
  std::array<std::uint64_t, kRpcLatencyBucketsS.size() + 1> latency_buckets{};
  std::uint64_t received_bytes = 0;  // serialised request messages (spmvd.v1 services only)
};

class RpcMetrics {
 public:
  RpcMetrics();
  void record(const std::string& method, grpc::StatusCode code, double latency_s,
              std::uint64_t received_bytes);
  std::vector<RpcMethodStats> snapshot() const;  // ordered by method
  double uptime_s() const;

 private:
  const std::chrono::steady_clock::time_point start_;
  mutable std::mutex mutex_;
  std::map<std::string, RpcMethodStats> methods_;
};

// "OK", "UNAUTHENTICATED", …: the names Prometheus labels and people read.
std::string status_code_name(grpc::StatusCode code);

// Creates one interceptor per call; it times the call from its first metadata to its status.
class RpcMetricsInterceptorFactory final
    : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  explicit RpcMetricsInterceptorFactory(RpcMetrics& metrics) : metrics_(metrics) {}
  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override;

 private:
  RpcMetrics& metrics_;
};

}  // namespace spmvd
