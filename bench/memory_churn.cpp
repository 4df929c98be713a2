// spmvd-memory-churn: many clients upload 100k-200k-row matrices, multiply, release, for several
// rounds, and the daemon's resident memory (VmRSS of its /proc/<pid>/status) is printed at the
// start, after each round's uploads and after each round's releases (issue 18, "Memory" in
// docs/OPERATIONS.md). One `key=value` line per reading, for scripts.

#include <CLI/CLI.hpp>

#include <chrono>
#include <fstream>
#include <iostream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "client/spmv_client.hpp"

namespace spmvd {
namespace {

std::uint64_t vm_rss_kib(int pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("VmRSS:", 0) == 0) return std::stoull(line.substr(6));
  throw std::runtime_error("no VmRSS in /proc/" + std::to_string(pid) + "/status");
}

// rows x 9 nonzeros around the diagonal with random values: ~21 MB of CSR at 200k rows.
CsrMatrix<double> banded(std::int64_t rows, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  CsrMatrix<double> m;
  m.rows = m.cols = rows;
  m.row_offsets.reserve(static_cast<std::size_t>(rows + 1));
  m.col_indices.reserve(static_cast<std::size_t>(rows * 9));
  m.values.reserve(static_cast<std::size_t>(rows * 9));
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t c = std::max<std::int64_t>(0, r - 4); c <= std::min(rows - 1, r + 4); ++c) {
      m.col_indices.push_back(static_cast<ColIndex>(c));
      m.values.push_back(value(rng));
    }
    m.row_offsets.push_back(m.nnz());
  }
  return m;
}

void report(const char* phase, int round, int pid) {
  std::cout << "phase=" << phase << " round=" << round << " rss_mb=" << vm_rss_kib(pid) / 1024
            << std::endl;
}

}  // namespace
}  // namespace spmvd

int main(int argc, char** argv) {
  using namespace spmvd;
  CLI::App app{"spmvd-memory-churn — the daemon's resident memory across upload/release rounds"};
  std::string server = "127.0.0.1:50051";
  int pid = 0, clients = 64, multiplies = 20, rounds = 3, settle_ms = 3000;
  std::int64_t rows_min = 100'000, rows_max = 200'000;
  app.add_option("--server", server)->capture_default_str();
  app.add_option("--pid", pid, "the daemon's process id")->required();
  app.add_option("--clients", clients, "concurrent clients, one matrix each")->capture_default_str();
  app.add_option("--multiplies", multiplies, "multiplies per client per round")->capture_default_str();
  app.add_option("--rounds", rounds)->capture_default_str();
  app.add_option("--rows-min", rows_min)->capture_default_str();
  app.add_option("--rows-max", rows_max)->capture_default_str();
  app.add_option("--settle-ms", settle_ms, "wait after releases before reading (trim interval)")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  report("start", 0, pid);
  for (int round = 1; round <= rounds; ++round) {
    std::vector<std::string> handles(static_cast<std::size_t>(clients));
    std::vector<std::thread> threads;
    std::vector<std::string> failures(static_cast<std::size_t>(clients));
    // Phase 1: every client uploads and multiplies; all matrices are resident together.
    for (int c = 0; c < clients; ++c) {
      threads.emplace_back([&, c] {
        try {
          SpmvClient client(server);
          std::mt19937_64 rng(static_cast<std::uint64_t>(round * 1000 + c));
          const std::int64_t rows =
              std::uniform_int_distribution<std::int64_t>(rows_min, rows_max)(rng);
          const auto info = client.upload(banded(rows, rng()), Precision::fp64);
          handles[static_cast<std::size_t>(c)] = info.handle();
          const std::vector<double> x(static_cast<std::size_t>(rows), 1.0);
          for (int i = 0; i < multiplies; ++i) client.multiply(info.handle(), 1.0, 0.0, {x});
        } catch (const std::exception& e) {
          failures[static_cast<std::size_t>(c)] = e.what();
        }
      });
    }
    for (auto& t : threads) t.join();
    for (const auto& f : failures)
      if (!f.empty()) std::cerr << "client failed: " << f << "\n";
    report("resident", round, pid);
    // Phase 2: every matrix released.
    SpmvClient client(server);
    for (const auto& handle : handles)
      if (!handle.empty()) client.release(handle);
    std::this_thread::sleep_for(std::chrono::milliseconds(settle_ms));
    report("released", round, pid);
  }
  return 0;
}
