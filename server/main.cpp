// spmvd: the daemon's lifecycle — parse, open, serve, wait for a signal, drain, exit.

#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <csignal>
#include <fstream>
#include <iostream>

#include "core/error.hpp"
#include "db/open_plan_store.hpp"
#include "kernels/format_registry.hpp"
#include "server/admin_service.hpp"
#include "server/config_parser.hpp"
#include "server/engine.hpp"
#include "server/kernel_warm_up.hpp"
#include "server/large_allocations.hpp"
#include "server/listen_address.hpp"
#include "server/metrics.hpp"
#include "server/rpc_metrics.hpp"
#include "server/spmv_service.hpp"
#include "server/tls_config.hpp"
#include "server/token_auth.hpp"

namespace spmvd {
namespace {

// Blocked in every thread (gRPC's threads inherit the mask) so only sigwait sees them.
sigset_t termination_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  return set;
}

void block_termination_signals() {
  const sigset_t set = termination_signals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

int wait_for_termination_signal() {
  const sigset_t set = termination_signals();
  int signal = 0;
  sigwait(&set, &signal);
  return signal;
}

void configure_logging(const std::string& level) {
  spdlog::set_level(spdlog::level::from_str(level));
  spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ %v");
}

std::unique_ptr<Device> open_device(const DaemonConfig& config) {
  const bool gpu_present = cuda_device_count() > 0;
  if (config.device == DeviceChoice::gpu && !gpu_present)
    throw Error(ErrorCode::failed_precondition, "--device gpu was asked for, but no CUDA GPU is visible");
  if (config.device != DeviceChoice::cpu && gpu_present) return make_cuda_device(config.gpu_ordinal);
  if (config.device == DeviceChoice::automatic)
    spdlog::warn("no CUDA GPU visible: serving with the CPU backend (oneTBB)");
  return make_cpu_device();
}

EngineConfig engine_config_for(const DaemonConfig& config, const DeviceInfo& device) {
  EngineConfig engine{config.memory_budget_bytes, config.tuner, {}, config.trim_memory_interval_ms,
                      static_cast<std::size_t>(config.samples_per_format),
                      config.refit_interval_s};
  if (engine.memory_budget_bytes == 0) {
    // 80% of the device leaves room for cuSPARSE workspaces and the tuner's trial builds.
    const std::uint64_t memory = device.memory_bytes ? device.memory_bytes : (std::uint64_t{8} << 30);
    engine.memory_budget_bytes = memory / 5 * 4;
  }
  return engine;
}

std::unique_ptr<grpc::Server> start_grpc_server(
    const DaemonConfig& config, const std::shared_ptr<grpc::ServerCredentials>& credentials,
    SpmvService& service, AdminService& admin, RpcMetrics& rpc_metrics, int& bound_port) {
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  builder.AddListeningPort(config.listen_address, credentials, &bound_port);
  std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>> interceptors;
  interceptors.push_back(std::make_unique<RpcMetricsInterceptorFactory>(rpc_metrics));
  builder.experimental().SetInterceptorCreators(std::move(interceptors));
  builder.SetMaxReceiveMessageSize(static_cast<int>(config.max_message_bytes));
  builder.SetMaxSendMessageSize(static_cast<int>(config.max_message_bytes));
  builder.RegisterService(&service);
  builder.RegisterService(&admin);
  auto server = builder.BuildAndStart();
  if (!server || bound_port == 0)
    throw Error(ErrorCode::unavailable, "cannot listen on " + config.listen_address);
  server->GetHealthCheckService()->SetServingStatus(true);
  return server;
}

// Before serving: a daemon that tunes with models from its first request on.
void load_performance_models(Engine& engine, const DaemonConfig& config) {
  std::string last_stage;
  engine.load_calibration(config.calibrate_on_start, [&](const CalibrationProgress& p) {
    if (p.stage == last_stage) return;
    last_stage = p.stage;
    spdlog::info("calibrating [{}/{}] {}", p.done, p.total, p.stage);
  });
}

// Before serving, on a GPU: no request pays a kernel's first load.
void warm_up(const FormatRegistry& registry, Device& device, const DaemonConfig& config) {
  if (!config.warm_up_kernels || !device.info().is_gpu) return;
  const KernelWarmUp done = warm_up_kernels(registry, device);
  spdlog::info("kernels loaded: {} candidates built and applied once in {:.0f} ms{}",
               done.candidates, done.ms,
               done.failed
                   ? " (" + std::to_string(done.failed) + " failed; --log-level debug says why)"
                   : std::string());
}

// The local plan store, in front of the cluster store when one is configured. The local store
// must open; an unreachable cluster store only degrades (TieredPlanStore).
std::unique_ptr<TieredPlanStore> open_plan_stores(const DaemonConfig& config) {
  TieredPlanStoreOptions options;
  options.retry_max_ms = config.cluster_store_retry_max_ms;
  auto stores = open_tiered_plan_store(config.database_url, config.cluster_store_url, options);
  spdlog::info("plan cache: {}{}", displayed_plan_store_url(config.database_url),
               config.cluster_store_url.empty()
                   ? ""
                   : ", cluster store " + displayed_plan_store_url(config.cluster_store_url));
  return stores;
}

std::unique_ptr<MetricsEndpoint> start_metrics_endpoint(const DaemonConfig& config,
                                                        const Engine& engine,
                                                        const RpcMetrics& rpc_metrics,
                                                        const StoreStats& store) {
  if (config.metrics_listen.empty()) return nullptr;
  auto endpoint =
      std::make_unique<MetricsEndpoint>(config.metrics_listen, engine, rpc_metrics, store);
  spdlog::info("metrics on http://{}/metrics (port {})", config.metrics_listen, endpoint->port());
  return endpoint;
}

// Says at start who can reach what: the first thing an operator checks.
void log_exposure(const DaemonConfig& config, int port, const ServiceTokens& tokens) {
  spdlog::info("serving on {} (port {}, {}){}", config.listen_address, port,
               transport_description(config.security),
               is_loopback_address(config.listen_address)
                   ? ": loopback only, not reachable from other hosts"
                   : ": reachable from other hosts");
  spdlog::info("Admin service: {}; Spmv service: {}",
               tokens.admin ? "bearer token required" : "no token (loopback only)",
               tokens.spmv ? "bearer token required" : "open");
}

void write_port_file(const std::string& path, int port) {
  if (path.empty()) return;
  const std::string temporary = path + ".tmp";
  std::ofstream(temporary) << port << '\n';
  std::rename(temporary.c_str(), path.c_str());  // readers never see a half-written file
}

void drain(grpc::Server& server, std::uint64_t grace_ms) {
  server.GetHealthCheckService()->SetServingStatus(false);
  // New calls are refused at once; in-flight calls get grace_ms, then are cancelled.
  server.Shutdown(std::chrono::system_clock::now() + std::chrono::milliseconds(grace_ms));
  server.Wait();
}

int run(const DaemonConfig& config) {
  configure_logging(config.log_level);
  serve_large_allocations_by_mmap(config.malloc_mmap_threshold_bytes);
  block_termination_signals();
  // Tokens and certificates first: a wrong path fails in a second, not after a calibration.
  const ServiceTokens tokens = load_service_tokens(config.security, config.listen_address);
  const auto credentials = server_credentials(config.security);
  auto device = open_device(config);
  spdlog::info("device: {}", device->info().signature());
  const auto stores = open_plan_stores(config);
  PlanStore& plans = *stores;
  const auto& registry = format_registry();
  Engine engine(engine_config_for(config, device->info()), *device, plans, registry);
  load_performance_models(engine, config);
  warm_up(registry, *device, config);
  RpcMetrics rpc_metrics;
  SpmvService service(engine, config.max_upload_bytes, ServiceGuard("Spmv", tokens.spmv));
  AdminService admin(engine, plans, stores->stats(), registry, rpc_metrics,
                     ServiceGuard("Admin", tokens.admin));
  int port = 0;
  auto server = start_grpc_server(config, credentials, service, admin, rpc_metrics, port);
  const auto metrics = start_metrics_endpoint(config, engine, rpc_metrics, stores->stats());
  // The metrics port first: a test that sees the gRPC port file finds both.
  if (metrics) write_port_file(config.metrics_port_file, metrics->port());
  write_port_file(config.port_file, port);
  log_exposure(config, port, tokens);
  spdlog::info("{} formats registered", registry.entries().size());
  const int signal = wait_for_termination_signal();
  spdlog::info("signal {}: draining (up to {} ms)", signal, config.shutdown_grace_ms);
  drain(*server, config.shutdown_grace_ms);
  spdlog::info("stopped");
  return 0;
}

}  // namespace
}  // namespace spmvd

int main(int argc, char** argv) {
  auto parsed = spmvd::parse_daemon_config(argc, argv);
  if (auto* exit = std::get_if<spmvd::ConfigExit>(&parsed)) {
    std::cout << exit->message;
    return exit->exit_code;
  }
  try {
    return spmvd::run(std::get<spmvd::DaemonConfig>(parsed));
  } catch (const spmvd::Error& e) {
    spdlog::critical("{}: {}", spmvd::to_string(e.code()), e.what());
    return 1;
  }
}
