#include "server/rpc_metrics.hpp"

#include <google/protobuf/message_lite.h>

#include <algorithm>

namespace spmvd {
namespace {

using grpc::experimental::InterceptionHookPoints;

class RpcMetricsInterceptor final : public grpc::experimental::Interceptor {
 public:
  RpcMetricsInterceptor(RpcMetrics& metrics, std::string method)
      : metrics_(metrics),
        method_(std::move(method)),
        // Only spmvd's own services are protobuf-typed sync services; gRPC's health service
        // hands over a ByteBuffer, which is no protobuf message.
        counts_bytes_(method_.starts_with("/spmvd.v1.")) {}

  void Intercept(grpc::experimental::InterceptorBatchMethods* batch) override {
    if (counts_bytes_ && batch->QueryInterceptionHookPoint(InterceptionHookPoints::POST_RECV_MESSAGE)) {
      // The sync server hands interceptors the deserialised request message.
      if (const auto* message =
              static_cast<const google::protobuf::MessageLite*>(batch->GetRecvMessage()))
        received_bytes_ += message->ByteSizeLong();
    }
    if (batch->QueryInterceptionHookPoint(InterceptionHookPoints::PRE_SEND_STATUS)) {
      const double latency_s =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
      metrics_.record(method_, batch->GetSendStatus().error_code(), latency_s, received_bytes_);
    }
    batch->Proceed();
  }

 private:
  RpcMetrics& metrics_;
  std::string method_;
  bool counts_bytes_;
  // The interceptor is created when the call arrives, before its handler runs.
  const std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::uint64_t received_bytes_ = 0;
};

}  // namespace

RpcMetrics::RpcMetrics() : start_(std::chrono::steady_clock::now()) {}

void RpcMetrics::record(const std::string& method, grpc::StatusCode code, double latency_s,
                        std::uint64_t received_bytes) {
  const auto bucket = static_cast<std::size_t>(
      std::lower_bound(kRpcLatencyBucketsS.begin(), kRpcLatencyBucketsS.end(), latency_s) -
      kRpcLatencyBucketsS.begin());
  std::lock_guard lock(mutex_);
  RpcMethodStats& stats = methods_[method];
  stats.method = method;
  ++stats.by_code[status_code_name(code)];
  ++stats.calls;
  stats.errors += code != grpc::StatusCode::OK;
  stats.latency_sum_s += latency_s;
  stats.latency_max_s = std::max(stats.latency_max_s, latency_s);
  ++stats.latency_buckets[bucket];
  stats.received_bytes += received_bytes;
}

std::vector<RpcMethodStats> RpcMetrics::snapshot() const {
  std::lock_guard lock(mutex_);
  std::vector<RpcMethodStats> out;
  for (const auto& [method, stats] : methods_) out.push_back(stats);
  return out;
}

double RpcMetrics::uptime_s() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

std::string status_code_name(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK: return "OK";
    case grpc::StatusCode::CANCELLED: return "CANCELLED";
    case grpc::StatusCode::UNKNOWN: return "UNKNOWN";
    case grpc::StatusCode::INVALID_ARGUMENT: return "INVALID_ARGUMENT";
    case grpc::StatusCode::DEADLINE_EXCEEDED: return "DEADLINE_EXCEEDED";
    case grpc::StatusCode::NOT_FOUND: return "NOT_FOUND";
    case grpc::StatusCode::ALREADY_EXISTS: return "ALREADY_EXISTS";
    case grpc::StatusCode::PERMISSION_DENIED: return "PERMISSION_DENIED";
    case grpc::StatusCode::RESOURCE_EXHAUSTED: return "RESOURCE_EXHAUSTED";
    case grpc::StatusCode::FAILED_PRECONDITION: return "FAILED_PRECONDITION";
    case grpc::StatusCode::ABORTED: return "ABORTED";
    case grpc::StatusCode::OUT_OF_RANGE: return "OUT_OF_RANGE";
    case grpc::StatusCode::UNIMPLEMENTED: return "UNIMPLEMENTED";
    case grpc::StatusCode::INTERNAL: return "INTERNAL";
    case grpc::StatusCode::UNAVAILABLE: return "UNAVAILABLE";
    case grpc::StatusCode::DATA_LOSS: return "DATA_LOSS";
    case grpc::StatusCode::UNAUTHENTICATED: return "UNAUTHENTICATED";
    default: return "CODE_" + std::to_string(static_cast<int>(code));
  }
}

grpc::experimental::Interceptor* RpcMetricsInterceptorFactory::CreateServerInterceptor(
    grpc::experimental::ServerRpcInfo* info) {
  return new RpcMetricsInterceptor(metrics_, info->method());
}

}  // namespace spmvd
