#include "server/config_parser.hpp"

#include <CLI/CLI.hpp>
#include <limits>
#include <map>
#include <optional>
#include <sstream>

namespace spmvd {

std::variant<DaemonConfig, ConfigExit> parse_daemon_config(int argc, char** argv) {
  DaemonConfig config;
  CLI::App app{"spmvd — tuned sparse matrix-vector multiplication as a gRPC service"};
  // A flag given twice (or in the file and on the command line) takes the last value.
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.set_config("--config", "", "TOML file with the same keys as the long flags");
  app.add_option("--listen", config.listen_address, "host:port to serve gRPC on")
      ->capture_default_str();
  app.add_option("--port-file", config.port_file, "write the bound port here once serving");
  app.add_option("--database", config.database_url,
                 "local plan cache: sqlite:///path.db, a file path, or postgresql://host/db")
      ->capture_default_str();
  app.add_option("--cluster-store", config.cluster_store_url,
                 "plan cache shared by a cluster, postgresql://host/db (optional)");
  app.add_option("--cluster-store-retry-max-ms", config.cluster_store_retry_max_ms,
                 "longest wait between attempts to reach an unavailable cluster store")
      ->capture_default_str()
      ->check(CLI::Range(1u, 3600000u));
  const std::map<std::string, DeviceChoice> devices{
      {"auto", DeviceChoice::automatic}, {"cpu", DeviceChoice::cpu}, {"gpu", DeviceChoice::gpu}};
  app.add_option("--device", config.device, "auto (GPU if present), cpu or gpu")
      ->transform(CLI::CheckedTransformer(devices, CLI::ignore_case));
  app.add_option("--gpu", config.gpu_ordinal, "CUDA device ordinal")->capture_default_str();
  app.add_option("--memory-budget-bytes", config.memory_budget_bytes,
                 "device bytes for resident matrices (0: 80% of device memory)");
  app.add_option("--max-upload-bytes", config.max_upload_bytes, "largest accepted upload")
      ->capture_default_str();
  app.add_option("--max-message-bytes", config.max_message_bytes, "largest gRPC message")
      ->capture_default_str();
  app.add_option("--shutdown-grace-ms", config.shutdown_grace_ms,
                 "time in-flight requests get after SIGTERM")
      ->capture_default_str();
  app.add_option("--log-level", config.log_level, "trace, debug, info, warn, error")
      ->capture_default_str();
  app.add_option("--calibrate-on-start", config.calibrate_on_start,
                 "calibrate the performance models at start when none are stored")
      ->capture_default_str();
  app.add_option("--warm-up-kernels", config.warm_up_kernels,
                 "launch every format's kernels once before serving (GPU)")
      ->capture_default_str();
  app.add_option("--tune-timed-runs", config.tuner.timed_runs,
                 "timed runs per candidate (median taken)")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000));
  app.add_option("--tune-warmup-runs", config.tuner.warmup_runs, "warm-up runs per candidate")
      ->capture_default_str()
      ->check(CLI::Range(0, 1000));
  app.add_option("--tune-budget-fraction", config.tuner.budget_fraction,
                 "tuning spends at most this fraction of the expected multiply time")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--expected-multiplies", config.tuner.default_expected_multiplies,
                 "multiplies expected of a matrix whose upload gives no expected_multiplies")
      ->capture_default_str()
      ->check(CLI::Range(std::uint64_t{1}, std::numeric_limits<std::uint64_t>::max()));
  std::string tune_mode = "auto";
  app.add_option("--tune-mode", tune_mode,
                 "auto (from the budget), model-only, verify-top-k, or exhaustive (the oracle, "
                 "ignores the budget)")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "model-only", "verify-top-k", "exhaustive"}));
  app.add_option("--admin-token-file", config.security.admin_token_file,
                 "file holding the Admin service's bearer token (or set SPMVD_ADMIN_TOKEN)");
  app.add_option("--spmv-token-file", config.security.spmv_token_file,
                 "file holding the Spmv service's bearer token (or set SPMVD_SPMV_TOKEN)");
  app.add_option("--tls-cert-file", config.security.tls_cert_file,
                 "PEM certificate chain: serve TLS (needs --tls-key-file)");
  app.add_option("--tls-key-file", config.security.tls_key_file, "PEM private key");
  app.add_option("--tls-client-ca-file", config.security.tls_client_ca_file,
                 "PEM CA bundle: require client certificates signed by it");
  app.add_option("--metrics-listen", config.metrics_listen,
                 "host:port of the Prometheus endpoint (empty: none)")
      ->capture_default_str();
  app.add_option("--metrics-port-file", config.metrics_port_file,
                 "write the bound metrics port here once serving");
  app.add_option("--trim-memory-interval-ms", config.trim_memory_interval_ms,
                 "return freed host memory to the OS after releases, at most this often (0: never)")
      ->capture_default_str();
  app.add_option("--samples-per-format", config.samples_per_format,
                 "measured samples kept per device, precision and format for `spmvctl model "
                 "refit` (oldest dropped)")
      ->capture_default_str()
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 24));
  app.add_option("--refit-interval-s", config.refit_interval_s,
                 "refit the models from the measured samples this often (0: only on request)")
      ->capture_default_str();
  app.add_option("--malloc-mmap-threshold-bytes", config.malloc_mmap_threshold_bytes,
                 "host buffers of at least this size get their own mapping, returned to the OS "
                 "when freed (0: glibc's default, which moves)")
      ->capture_default_str()
      ->check(CLI::Range(std::uint64_t{0}, std::uint64_t{32} << 20));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    std::ostringstream out, err;
    const int code = app.exit(e, out, err);
    return ConfigExit{code, out.str() + err.str()};
  }
  config.tuner.mode = parse_tune_mode(tune_mode);  // nullopt for "auto"
  return config;
}

}  // namespace spmvd
