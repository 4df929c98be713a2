#pragma once
// The daemon's configuration: a struct tree with defaults and units in the names, filled once
// from flags and an optional config file (config_parser.cpp), then passed down; never global.

#include <cstdint>
#include <string>

#include "tuner/tuner.hpp"

namespace spmvd {

enum class DeviceChoice { automatic, cpu, gpu };

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
  TunerOptions tuner;
};

}  // namespace spmvd
