#pragma once
// The daemon's configuration: a struct tree with defaults and units in the names, filled once
// from flags and an optional config file (config_parser.cpp), then passed down; never global.

#include <cstdint>
#include <string>

#include "db/plan_store.hpp"
#include "tuner/tuner.hpp"

namespace spmvd {

enum class DeviceChoice { automatic, cpu, gpu };

// Who may call what, and over which transport (docs/OPERATIONS.md "Security"). Tokens are read
// from files or from the environment (SPMVD_ADMIN_TOKEN, SPMVD_SPMV_TOKEN), never from a flag's
// value, which `ps` shows to every user of the machine.
struct SecurityConfig {
  std::string admin_token_file;  // Admin service bearer token; none: loopback-only admin
  std::string spmv_token_file;   // Spmv service bearer token; none: Spmv open
  std::string tls_cert_file;     // PEM; with tls_key_file, serve TLS instead of plaintext
  std::string tls_key_file;
  std::string tls_client_ca_file;  // PEM; if set, clients must present a certificate it signed
};

struct DaemonConfig {
  std::string listen_address = "127.0.0.1:50051";
  std::string port_file;  // if set, the bound port is written here once serving (for tests)
  // The local plan store: sqlite:///path/plans.db, a plain file path, or postgresql://host/db
  // (db/open_plan_store.hpp).
  std::string database_url = "spmvd.db";
  // Optional cluster plan store shared by every daemon (postgresql://host/db): read after a
  // local miss, written with every put; the local store must then be SQLite.
  std::string cluster_store_url;
  std::uint32_t cluster_store_retry_max_ms = 30000;  // backoff ceiling while it is unreachable
  DeviceChoice device = DeviceChoice::automatic;  // automatic: the GPU if one is present
  int gpu_ordinal = 0;
  // Device bytes all resident matrices may occupy; 0 chooses 80% of the device's memory.
  std::uint64_t memory_budget_bytes = 0;
  std::uint64_t max_upload_bytes = std::uint64_t{8} << 30;   // one Upload stream, all chunks
  std::uint64_t max_message_bytes = std::uint64_t{64} << 20;  // one gRPC message
  std::uint64_t shutdown_grace_ms = 10000;  // in-flight requests get this long after SIGTERM
  std::string log_level = "info";
  // Calibrate the performance models at start when none are stored for this device (both
  // precisions; about two minutes on an H100). Without models the tuner measures every
  // admissible candidate.
  bool calibrate_on_start = true;
  // Launch every format's kernels once before serving (server/kernel_warm_up.hpp), so that no
  // tuning or multiply pays a kernel's first load; a fraction of a second on a GPU.
  bool warm_up_kernels = true;
  TunerOptions tuner;
  SecurityConfig security;
  // Prometheus text exposition over HTTP (GET /metrics); empty disables it.
  std::string metrics_listen = "127.0.0.1:9464";
  std::string metrics_port_file;  // if set, the bound metrics port is written here (for tests)
  // After a release, freed host memory goes back to the OS at most this often (0: never).
  std::uint64_t trim_memory_interval_ms = 1000;
  // Measured samples kept per (device, precision, format) for the refit (docs/TUNER.md).
  std::uint64_t samples_per_format = kDefaultSamplesPerFormat;
  // The daemon refits the measured_refit factors this often (0: only on `spmvctl model refit`).
  std::uint32_t refit_interval_s = 0;
  // Host allocations of at least this many bytes get their own mapping, returned to the OS when
  // freed (server/large_allocations.hpp); 0 leaves glibc's moving threshold.
  std::uint64_t malloc_mmap_threshold_bytes = std::uint64_t{1} << 20;
};

}  // namespace spmvd
