// What an operator and a user check against the real daemon (issue 18, server side): uploads
// that used to be refused or wrongly accepted; spmvctl with the admin token right, wrong and
// absent; the Spmv token; TLS with a certificate made here; plans exported from one daemon
// seeding another; `spmvctl stats` and `formats`; the Prometheus endpoint scraped over HTTP.

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <thread>

#include "client/admin_client.hpp"
#include "client/spmv_client.hpp"
#include "db/sqlite_plan_store.hpp"
#include "kernels/device.hpp"
#include "models/device_calibration.hpp"
#include "models/families/bytes/bytes_record.hpp"
#include "tests/integration/daemon_process.hpp"

namespace spmvd {
namespace {

using testing::DaemonProcess;

// A banded matrix whose values are multiples of 1/8, so every sum below is exact.
CsrMatrix<double> banded_matrix(std::int64_t rows, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> eighths(-64, 64);
  CsrMatrix<double> m;
  m.rows = m.cols = rows;
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t c = std::max<std::int64_t>(0, r - 4); c <= std::min(rows - 1, r + 4); ++c) {
      m.col_indices.push_back(static_cast<ColIndex>(c));
      m.values.push_back(eighths(rng) / 8.0);
    }
    m.row_offsets.push_back(m.nnz());
  }
  return m;
}

// The same matrix as SciPy hands it over before sort_indices()/sum_duplicates(): each row's
// entries shuffled, and every third entry split into two duplicates that sum to it.
CsrMatrix<double> scipy_style(const CsrMatrix<double>& sorted, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  CsrMatrix<double> m;
  m.rows = sorted.rows;
  m.cols = sorted.cols;
  std::vector<std::pair<ColIndex, double>> row;
  for (std::int64_t r = 0; r < sorted.rows; ++r) {
    row.clear();
    for (RowOffset k = sorted.row_offsets[r]; k < sorted.row_offsets[r + 1]; ++k) {
      if (k % 3 == 0) {
        row.emplace_back(sorted.col_indices[k], 0.25);
        row.emplace_back(sorted.col_indices[k], sorted.values[k] - 0.25);
      } else {
        row.emplace_back(sorted.col_indices[k], sorted.values[k]);
      }
    }
    std::shuffle(row.begin(), row.end(), rng);
    for (const auto& [c, v] : row) {
      m.col_indices.push_back(c);
      m.values.push_back(v);
    }
    m.row_offsets.push_back(m.nnz());
  }
  return m;
}

std::vector<double> random_values(std::int64_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> eighths(-8, 8);
  std::vector<double> v(static_cast<std::size_t>(n));
  for (auto& e : v) e = eighths(rng) / 8.0;
  return v;
}

std::string run_command(const std::string& command, int& exit_code) {
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) throw std::runtime_error("popen failed: " + command);
  std::string output;
  char buffer[4096];
  while (fgets(buffer, sizeof buffer, pipe)) output += buffer;
  exit_code = WEXITSTATUS(pclose(pipe));
  return output;
}

template <typename Body>
void expect_rpc_error(Body&& body, grpc::StatusCode code, const std::string& text) {
  try {
    body();
    FAIL() << "expected status " << code << " containing '" << text << "'";
  } catch (const RpcError& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
  }
}

// GET /metrics over a plain socket; returns the body.
std::string scrape(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    close(fd);
    throw std::runtime_error("cannot connect to the metrics port " + std::to_string(port));
  }
  const std::string request = "GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
  if (write(fd, request.data(), request.size()) != static_cast<ssize_t>(request.size()))
    throw std::runtime_error("short write to the metrics port");
  std::string response;
  char buffer[8192];
  for (ssize_t n; (n = read(fd, buffer, sizeof buffer)) > 0;) response.append(buffer, static_cast<std::size_t>(n));
  close(fd);
  const auto body = response.find("\r\n\r\n");
  if (response.rfind("HTTP/1.", 0) != 0 || response.find(" 200 ") == std::string::npos || body == std::string::npos)
    throw std::runtime_error("metrics endpoint answered: " + response.substr(0, 200));
  return response.substr(body + 4);
}

// Text exposition -> {"name{labels}" -> value}, comments skipped. Throws on a malformed line.
std::map<std::string, double> parse_exposition(const std::string& text) {
  std::map<std::string, double> samples;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] == '#') continue;
    const auto space = line.rfind(' ');
    if (space == std::string::npos) throw std::runtime_error("malformed sample line: " + line);
    samples[line.substr(0, space)] = std::stod(line.substr(space + 1));
  }
  return samples;
}

double sample(const std::map<std::string, double>& samples, const std::string& key) {
  const auto found = samples.find(key);
  if (found == samples.end()) {
    ADD_FAILURE() << "no sample " << key;
    return -1.0;
  }
  return found->second;
}

// grpc.health.v1 Check without metadata, with a deadline a loaded CI machine cannot miss
// (SpmvClient::healthy() allows 2 s, meant for interactive use).
bool health_serving(const std::string& address) {
  auto stub = grpc::health::v1::Health::NewStub(
      grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  grpc::health::v1::HealthCheckResponse reply;
  const grpc::Status status = stub->Check(&context, {}, &reply);
  return status.ok() && reply.status() == grpc::health::v1::HealthCheckResponse::SERVING;
}

class OperatorIntegration : public ::testing::Test {
 protected:
  void SetUp() override {
    unsetenv("SPMVD_ADMIN_TOKEN");
    unsetenv("SPMVD_SPMV_TOKEN");
    dir_ = std::filesystem::temp_directory_path() /
           ("spmvd-op-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::unique_ptr<DaemonProcess> start(std::vector<std::string> extra = {},
                                       const std::string& database_name = "plans.db") {
    std::vector<std::string> args{"--database", (dir_ / database_name).string(), "--device",
                                  "auto", "--tune-timed-runs", "3", "--calibrate-on-start",
                                  "false"};
    args.insert(args.end(), extra.begin(), extra.end());
    return std::make_unique<DaemonProcess>(SPMVD_DAEMON_PATH, dir_.string(), args);
  }
  std::string write_file(const std::string& name, const std::string& content) {
    const auto path = (dir_ / name).string();
    std::ofstream(path) << content;
    std::filesystem::permissions(path, std::filesystem::perms::owner_read |
                                           std::filesystem::perms::owner_write);
    return path;
  }
  std::string spmvctl(const DaemonProcess& daemon, const std::string& arguments, int& exit_code,
                      const std::string& environment = "") {
    return run_command(environment + " " + SPMVCTL_PATH + " --server " + daemon.address() + " " +
                           arguments,
                       exit_code);
  }

  std::filesystem::path dir_;
};

TEST_F(OperatorIntegration, ScipyStyleUnsortedCsrWithDuplicatesGivesTheSameYAsTheSortedOne) {
  auto daemon = start();
  SpmvClient client(daemon->address());
  const CsrMatrix<double> sorted = banded_matrix(30'000, 7);
  const CsrMatrix<double> unsorted = scipy_style(sorted, 8);
  ASSERT_GT(unsorted.nnz(), sorted.nnz());

  const auto sorted_info = client.upload(sorted, Precision::fp64, "sorted");
  const auto unsorted_info = client.upload(unsorted, Precision::fp64, "scipy");
  EXPECT_EQ(unsorted_info.nnz(), sorted.nnz()) << "duplicates summed";
  EXPECT_EQ(unsorted_info.fingerprint(), sorted_info.fingerprint()) << "same structure once sorted";

  const auto x = random_values(sorted.cols, 9);
  const auto y_sorted = client.multiply(sorted_info.handle(), 1.0, 0.0, {x});
  const auto y_unsorted = client.multiply(unsorted_info.handle(), 1.0, 0.0, {x});
  const std::vector<double> a(y_sorted.y(0).values().begin(), y_sorted.y(0).values().end());
  const std::vector<double> b(y_unsorted.y(0).values().begin(), y_unsorted.y(0).values().end());
  std::vector<double> reference(static_cast<std::size_t>(sorted.rows));
  reference_spmv(sorted, x.data(), reference.data(), 1.0, 0.0);
  EXPECT_EQ(a, reference);
  EXPECT_EQ(b, reference) << "eighths sum exactly, so the unsorted upload's y is the same";
  EXPECT_EQ(daemon->stop(SIGTERM), 0);
}

TEST_F(OperatorIntegration, Fp32UploadThatOverflowsIsRefusedNamingTheEntry) {
  auto daemon = start();
  SpmvClient client(daemon->address());
  CsrMatrix<double> m = banded_matrix(100, 3);
  m.values[421] = 1e300;  // rows 0-3 hold 5-8 entries, then 9 each: entry 421 is row 47's 6th
  ASSERT_EQ(m.row_offsets[47], 26 + 43 * 9);
  expect_rpc_error([&] { client.upload(m, Precision::fp32); }, grpc::StatusCode::INVALID_ARGUMENT,
                   "row 47, column " + std::to_string(m.col_indices[421]) +
                       ": value 1e+300 overflows fp32 (largest finite 3.4028235e+38) (entry 421)");
  EXPECT_NO_THROW(client.upload(m, Precision::fp64)) << "fp64 holds 1e300";
  EXPECT_NO_THROW(client.list()) << "the daemon keeps serving";
}

TEST_F(OperatorIntegration, SpmvctlWithTheAdminTokenRightWrongAndAbsent) {
  const std::string token_file = write_file("admin.token", "correct-horse\n");
  auto daemon = start({"--admin-token-file", token_file});
  int code = -1;

  auto out = spmvctl(*daemon, "formats", code);
  EXPECT_EQ(code, 2) << out;
  EXPECT_NE(out.find("UNAUTHENTICATED: the Admin service needs `authorization: Bearer <token>` metadata"),
            std::string::npos)
      << out;

  out = spmvctl(*daemon, "formats", code, "SPMVCTL_TOKEN=battery-staple");
  EXPECT_EQ(code, 2) << out;
  EXPECT_NE(out.find("PERMISSION_DENIED: the bearer token is not the Admin service's token"),
            std::string::npos)
      << out;

  out = spmvctl(*daemon, "--token-file " + token_file + " formats", code);
  EXPECT_EQ(code, 0) << out;
  EXPECT_NE(out.find("cpu_csr"), std::string::npos) << out;
  out = spmvctl(*daemon, "--json formats", code, "SPMVCTL_TOKEN=correct-horse");
  EXPECT_EQ(code, 0) << out;
  const auto formats = nlohmann::json::parse(out);
  const auto& list = formats.at("formats");
  ASSERT_FALSE(list.empty());
  EXPECT_TRUE(std::any_of(list.begin(), list.end(), [](const auto& f) {
    return f.at("name") == "cpu_csr" && f.at("id") == 1 && f.at("usable_here") == true;
  })) << out;

  // Without an Spmv token, multiply traffic and health stay open.
  SpmvClient client(daemon->address());
  EXPECT_TRUE(health_serving(daemon->address()));
  EXPECT_NO_THROW(client.list());
  EXPECT_EQ(daemon->stop(SIGTERM), 0);
}

TEST_F(OperatorIntegration, SpmvTokenFromTheEnvironmentGuardsMultiplyTrafficButNotHealth) {
  setenv("SPMVD_SPMV_TOKEN", "spmv-secret", 1);
  auto daemon = start();
  unsetenv("SPMVD_SPMV_TOKEN");
  SpmvClient anonymous(daemon->address());
  EXPECT_TRUE(health_serving(daemon->address())) << "health needs no token";
  expect_rpc_error([&] { anonymous.list(); }, grpc::StatusCode::UNAUTHENTICATED,
                   "the Spmv service needs `authorization: Bearer <token>` metadata");
  expect_rpc_error([&] { anonymous.upload(banded_matrix(10, 1), Precision::fp64); },
                   grpc::StatusCode::UNAUTHENTICATED, "Spmv service");
  ClientOptions wrong;
  wrong.connection.token = "guess";
  SpmvClient guessing(daemon->address(), wrong);
  expect_rpc_error([&] { guessing.list(); }, grpc::StatusCode::PERMISSION_DENIED,
                   "the bearer token is not the Spmv service's token");
  ClientOptions right;
  right.connection.token = "spmv-secret";
  SpmvClient client(daemon->address(), right);
  const auto info = client.upload(banded_matrix(1000, 2), Precision::fp64);
  EXPECT_EQ(client.multiply(info.handle(), 1.0, 0.0, {random_values(1000, 3)}).y_size(), 1);

  int code = -1;
  const auto out = run_command("SPMV_TOKEN=spmv-secret " + std::string(SPMV_CLI_PATH) +
                                   " --server " + daemon->address() + " list",
                               code);
  EXPECT_EQ(code, 0) << out;
  EXPECT_NE(out.find(info.handle()), std::string::npos) << out;
}

TEST_F(OperatorIntegration, AdminWithoutATokenRefusesToListenBeyondLoopback) {
  int code = -1;
  const auto out = run_command(std::string(SPMVD_DAEMON_PATH) + " --listen 0.0.0.0:0 --database " +
                                   (dir_ / "plans.db").string() +
                                   " --metrics-listen '' --calibrate-on-start false",
                               code);
  EXPECT_EQ(code, 1) << out;
  EXPECT_NE(out.find("the Admin service has no token and --listen 0.0.0.0:0 is reachable from "
                     "other hosts: set admin-token-file (or SPMVD_ADMIN_TOKEN), or listen on a "
                     "loopback address"),
            std::string::npos)
      << out;
}

class TlsIntegration : public OperatorIntegration {
 protected:
  // A self-signed certificate for localhost and 127.0.0.1, made with the openssl CLI.
  void make_certificate(const std::string& name) {
    int code = -1;
    const auto out = run_command(
        "openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=localhost"
        " -addext subjectAltName=DNS:localhost,IP:127.0.0.1 -keyout " +
            (dir_ / (name + ".key")).string() + " -out " + (dir_ / (name + ".crt")).string(),
        code);
    ASSERT_EQ(code, 0) << out;
  }
  std::string file(const std::string& name) const { return (dir_ / name).string(); }
};

TEST_F(TlsIntegration, SpmvctlWithTokenOverTlsWorksAndPlaintextFails) {
  make_certificate("server");
  const std::string token_file = write_file("admin.token", "tls-admin-token");
  auto daemon = start({"--tls-cert-file", file("server.crt"), "--tls-key-file", file("server.key"),
                       "--admin-token-file", token_file});
  int code = -1;
  auto out = spmvctl(*daemon, "--tls-ca-file " + file("server.crt") + " --token-file " +
                                  token_file + " stats",
                     code);
  EXPECT_EQ(code, 0) << out;
  EXPECT_NE(out.find("plan cache: 0 hits, 0 misses"), std::string::npos) << out;

  out = spmvctl(*daemon, "--tls-ca-file " + file("server.crt") + " stats", code);
  EXPECT_EQ(code, 2) << out;
  EXPECT_NE(out.find("UNAUTHENTICATED"), std::string::npos) << "TLS alone is not the token: " << out;

  out = spmvctl(*daemon, "--token-file " + token_file + " stats", code);
  EXPECT_EQ(code, 2) << out;
  EXPECT_NE(out.find("UNAVAILABLE"), std::string::npos) << "plaintext against TLS: " << out;

  ClientOptions tls;
  tls.connection.tls_ca_file = file("server.crt");
  SpmvClient client(daemon->address(), tls);
  const auto info = client.upload(banded_matrix(500, 4), Precision::fp64);
  EXPECT_EQ(client.multiply(info.handle(), 1.0, 0.0, {random_values(500, 5)}).y(0).values_size(), 500);
  EXPECT_EQ(daemon->stop(SIGTERM), 0);
}

TEST_F(TlsIntegration, ClientCertificatesAreRequiredWhenAClientCaIsConfigured) {
  make_certificate("server");
  make_certificate("client");
  auto daemon = start({"--tls-cert-file", file("server.crt"), "--tls-key-file", file("server.key"),
                       "--tls-client-ca-file", file("client.crt")});
  int code = -1;
  auto out = spmvctl(*daemon, "--tls-ca-file " + file("server.crt") + " formats", code);
  EXPECT_EQ(code, 2) << "no client certificate: " << out;
  out = spmvctl(*daemon, "--tls-ca-file " + file("server.crt") + " --tls-cert-file " +
                             file("client.crt") + " --tls-key-file " + file("client.key") +
                             " formats",
                code);
  EXPECT_EQ(code, 0) << out;
  EXPECT_NE(out.find("cpu_csr"), std::string::npos) << out;
}

TEST_F(OperatorIntegration, PlansExportedFromOneDaemonSeedAnother) {
  const CsrMatrix<double> m = banded_matrix(5'000, 11);
  std::string fingerprint;
  int code = -1;
  const std::string exported = (dir_ / "plans.jsonl").string();
  {
    auto a = start({}, "a.db");
    SpmvClient client(a->address());
    const auto info = client.upload(m, Precision::fp64);
    fingerprint = info.fingerprint();
    EXPECT_FALSE(client.tune(info.handle()).cache_hit());
    auto out = spmvctl(*a, "plans export --out " + exported, code);
    EXPECT_EQ(code, 0) << out;
    EXPECT_NE(out.find("exported 1 plans to " + exported), std::string::npos) << out;
    out = spmvctl(*a, "plans show " + fingerprint + " --precision fp64", code);
    EXPECT_EQ(code, 0) << out;
    EXPECT_NE(out.find("fingerprint:   " + fingerprint), std::string::npos) << out;
  }
  {
    std::ofstream(exported, std::ios::app) << "{\"fingerprint\": 12}\nnot json\n";
    auto b = start({}, "b.db");
    auto out = spmvctl(*b, "plans import " + exported, code);
    EXPECT_EQ(code, 1) << "two lines refused: " << out;
    EXPECT_NE(out.find(exported + ":2: \"fingerprint\" is not a string"), std::string::npos) << out;
    EXPECT_NE(out.find(exported + ":3: not valid JSON"), std::string::npos) << out;
    EXPECT_NE(out.find("imported 1 plans from 3 lines"), std::string::npos) << out;

    SpmvClient client(b->address());
    const auto info = client.upload(m, Precision::fp64);
    EXPECT_TRUE(client.tune(info.handle()).cache_hit()) << "the imported plan is used";

    out = spmvctl(*b, "plans delete " + fingerprint, code);
    EXPECT_EQ(code, 0) << out;
    EXPECT_NE(out.find("deleted 1 plan"), std::string::npos) << out;
    out = spmvctl(*b, "plans show " + fingerprint, code);
    EXPECT_EQ(code, 2) << out;
    EXPECT_NE(out.find("NOT_FOUND: no stored plan for fingerprint " + fingerprint), std::string::npos)
        << out;
  }
}

// A calibration for this machine's CPU device in which only the bytes model is calibrated, and
// at a bandwidth no CPU has: every prediction is off by a large factor, which the measured
// refit is there to learn.
std::string rough_cpu_calibration() {
  DeviceCalibration calibration;
  calibration.device = make_cpu_device()->info();
  for (ModelSet* set : {&calibration.fp32, &calibration.fp64}) {
    set->device_signature = calibration.device.signature();
    set->records.update<BytesRecord>([&](BytesRecord& r) {
      r.shared = BytesCalibration{
          .time_vs_bytes = {.intercept = 1e-4, .slope = 1.0 / 1e12, .quality = {}}};
    });  // 1 PB/s
  }
  calibration.fp32.precision = Precision::fp32;
  calibration.fp64.precision = Precision::fp64;
  return device_calibration_to_json(calibration);
}

TEST_F(OperatorIntegration, RefitFromTheSamplesOfRealTuningsReportsAccuracyBeforeAndAfter) {
  const std::string database = (dir_ / "plans.db").string();
  {
    SqlitePlanStore store({.path = database});
    store.put_calibration(make_cpu_device()->info().signature(), kModelVersion,
                          rough_cpu_calibration());
  }
  auto daemon = start({"--tune-mode", "exhaustive"});
  SpmvClient client(daemon->address());
  // Twelve tunings, each measuring every admissible CPU candidate: enough that each format has
  // the refit's 5 samples in the older half.
  for (int i = 0; i < 12; ++i) {
    const auto info = client.upload(banded_matrix(1'000 + 700 * i, 100 + i), Precision::fp64);
    EXPECT_FALSE(client.tune(info.handle()).cache_hit());
  }
  int code = -1;
  const std::string out = spmvctl(*daemon, "--json model refit", code);
  ASSERT_TRUE(code == 0 || code == 1) << out;
  const auto reply = nlohmann::json::parse(out);
  EXPECT_EQ(reply.at("device"), make_cpu_device()->info().signature());
  const nlohmann::json* fp64 = nullptr;
  for (const auto& p : reply.at("precisions"))
    if (p.at("precision") == "FP64") fp64 = &p;
  ASSERT_NE(fp64, nullptr) << out;
  // Proto3 JSON writes 64-bit integers as strings and leaves zeros out.
  const auto count = [&](const char* name) {
    return fp64->contains(name) ? std::stoull(fp64->at(name).get<std::string>()) : 0ull;
  };
  EXPECT_GE(count("stored_samples"), 24u) << "at least two candidates in each of 12 tunings";
  EXPECT_EQ(count("fit_samples") + count("heldout_samples") + count("skipped_samples"),
            count("stored_samples"));
  EXPECT_GT(count("heldout_samples"), 0u);
  ASSERT_FALSE(fp64->at("formats").empty()) << out;
  for (const auto& f : fp64->at("formats")) {
    EXPECT_FALSE(f.at("format_name").get<std::string>().empty());
    EXPECT_GT(f.at("median_relative_error_before").get<double>(), 0.0);
    EXPECT_TRUE(f.contains("median_relative_error_after"));
  }
  // 1 PB/s predicts far below what a CPU measures: the error before is near 100 %.
  EXPECT_GT(fp64->at("median_relative_error_before").get<double>(), 0.5) << out;
  const bool installed = fp64->value("installed", false);
  EXPECT_EQ(code, installed ? 0 : 1) << out;
  if (installed) {
    EXPECT_LT(fp64->at("median_relative_error_after").get<double>(),
              fp64->at("median_relative_error_before").get<double>());
    const auto models = AdminClient(daemon->address(), {}).show_models();
    const auto stored = nlohmann::json::parse(models.calibration_json());
    EXPECT_FALSE(stored.at("fp64").at("measured_refit").empty()) << "the factors are in use";
  } else {
    EXPECT_FALSE(fp64->value("refusal", std::string()).empty()) << out;
  }
  // The table for people says the same.
  const std::string table = spmvctl(*daemon, "model refit", code);
  EXPECT_NE(table.find("fp64: " + std::to_string(count("stored_samples")) + " stored samples"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("top-1 agreement on"), std::string::npos) << table;
}

TEST_F(OperatorIntegration, StatsAndMetricsMoveWithRealRequests) {
  auto daemon = start();
  ASSERT_GT(daemon->metrics_port(), 0);
  const auto before = parse_exposition(scrape(daemon->metrics_port()));
  EXPECT_EQ(sample(before, "spmvd_resident_matrices"), 0.0);
  EXPECT_EQ(sample(before, "spmvd_upload_bytes_total"), 0.0);
  EXPECT_EQ(sample(before, "spmvd_cluster_store_configured"), 0.0);

  SpmvClient client(daemon->address());
  const CsrMatrix<double> m = banded_matrix(20'000, 12);
  const auto info = client.upload(m, Precision::fp64, "stats-matrix");
  for (int i = 0; i < 3; ++i) client.multiply(info.handle(), 1.0, 0.0, {random_values(m.cols, i)});
  expect_rpc_error([&] { client.multiply("nope", 1.0, 0.0, {{1.0}}); }, grpc::StatusCode::NOT_FOUND,
                   "no resident matrix");
  // The upload's tuning runs in the background: wait for it (a Tune of a matrix being tuned
  // waits for that tuning), so that the counters below include it.
  const std::string tuned_format = client.tune(info.handle(), false).plan().format();

  int code = -1;
  const auto out = spmvctl(*daemon, "--json stats", code);
  ASSERT_EQ(code, 0) << out;
  const auto stats = nlohmann::json::parse(out);
  ASSERT_EQ(stats.at("matrices").size(), 1u) << out;
  EXPECT_EQ(stats["matrices"][0]["matrix"]["name"], "stats-matrix");
  EXPECT_GT(std::stoull(stats["matrices"][0]["device_bytes"].get<std::string>()), 0u);
  // The plan the tuning measured fastest: the CPU backend's CSR or COO (which wins a banded
  // matrix depends on the host's load; CI once measured COO faster on a busy 2-core machine).
  EXPECT_EQ(stats["matrices"][0]["format"], tuned_format);
  EXPECT_TRUE(tuned_format == "cpu_csr" || tuned_format == "cpu_coo") << tuned_format;
  EXPECT_EQ(stats["plan_cache_misses"], "1");
  ASSERT_EQ(stats.at("plan_store_tiers").size(), 1u) << "no cluster store: the local tier only";
  EXPECT_EQ(stats["plan_store_tiers"][0]["tier"], "local");
  EXPECT_EQ(stats["plan_store_tiers"][0]["misses"], "1") << "the tuning's lookup";

  const auto after = parse_exposition(scrape(daemon->metrics_port()));
  const std::string multiply = R"(method="/spmvd.v1.Spmv/Multiply")";
  EXPECT_EQ(sample(after, "spmvd_rpc_requests_total{code=\"OK\"," + multiply + "}"), 3.0);
  EXPECT_EQ(sample(after, "spmvd_rpc_requests_total{code=\"NOT_FOUND\"," + multiply + "}"), 1.0);
  EXPECT_EQ(sample(after, "spmvd_rpc_latency_seconds_count{" + multiply + "}"), 4.0);
  EXPECT_EQ(sample(after, "spmvd_rpc_latency_seconds_bucket{" + multiply + ",le=\"+Inf\"}"), 4.0);
  // Upload carries the CSR arrays: at least 8 bytes per value (packed doubles) besides the rest.
  EXPECT_GT(sample(after, "spmvd_upload_bytes_total"), 8.0 * static_cast<double>(m.nnz()));
  EXPECT_EQ(sample(after, "spmvd_plan_cache_misses_total"), 1.0);
  EXPECT_EQ(sample(after, "spmvd_plan_store_misses_total{tier=\"local\"}"), 1.0);
  EXPECT_GT(sample(after, "spmvd_tuning_seconds_total"), 0.0);
  EXPECT_GT(sample(after, "spmvd_tuning_spmv_equivalents_total"), 1.0);
  EXPECT_EQ(sample(after, "spmvd_resident_matrices"), 1.0);
  EXPECT_GT(sample(after, "spmvd_resident_device_bytes"), 0.0);
  EXPECT_EQ(sample(after, "spmvd_models_calibrated"), 0.0);
  EXPECT_GT(sample(after, "spmvd_process_resident_memory_bytes"), 0.0);

  client.release(info.handle());
  const auto released = parse_exposition(scrape(daemon->metrics_port()));
  EXPECT_EQ(sample(released, "spmvd_resident_matrices"), 0.0);
  EXPECT_EQ(sample(released, "spmvd_resident_device_bytes"), 0.0);
  EXPECT_EQ(sample(released, "spmvd_matrices_released_total"), 1.0);
  // The release asks for a malloc_trim; the trimmer runs it on its own thread.
  double trims = 0.0;
  for (int i = 0; i < 100 && trims < 1.0; ++i) {
    trims = sample(parse_exposition(scrape(daemon->metrics_port())), "spmvd_memory_trims_total");
    if (trims < 1.0) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_GE(trims, 1.0);
  EXPECT_EQ(daemon->stop(SIGTERM), 0);
}

}  // namespace
}  // namespace spmvd
