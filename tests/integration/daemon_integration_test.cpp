// The real daemon over loopback: upload > 4 MB, tune, multiply vs the CPU reference, restart
// and hit the plan cache, bad requests get precise statuses, SIGTERM drains.

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <signal.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <future>
#include <chrono>
#include <random>
#include <thread>

#include "client/admin_client.hpp"
#include "client/spmv_client.hpp"
#include "core/fingerprint.hpp"
#include "db/sqlite_plan_store.hpp"
#include "tests/integration/daemon_process.hpp"

namespace spmvd {
namespace {

using testing::DaemonProcess;

// A banded matrix with random values: rows x 9 nonzeros (rows = 200k => ~21 MB of CSR).
CsrMatrix<double> banded_matrix(std::int64_t rows, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  CsrMatrix<double> m;
  m.rows = m.cols = rows;
  m.row_offsets.reserve(static_cast<std::size_t>(rows + 1));
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t c = std::max<std::int64_t>(0, r - 4); c <= std::min(rows - 1, r + 4); ++c) {
      m.col_indices.push_back(static_cast<ColIndex>(c));
      m.values.push_back(value(rng));
    }
    m.row_offsets.push_back(m.nnz());
  }
  return m;
}

std::vector<double> random_values(std::int64_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  std::vector<double> v(static_cast<std::size_t>(n));
  for (auto& e : v) e = value(rng);
  return v;
}

class DaemonIntegration : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("spmvd-it-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::unique_ptr<DaemonProcess> start(std::vector<std::string> extra = {}) {
    // Calibration has its own test; elsewhere the tuner measures every candidate.
    std::vector<std::string> args{"--database", database(), "--device", "auto",
                                  "--tune-timed-runs", "5", "--calibrate-on-start", "false"};
    args.insert(args.end(), extra.begin(), extra.end());
    return std::make_unique<DaemonProcess>(SPMVD_DAEMON_PATH, dir_.string(), args);
  }
  std::string database() const { return (dir_ / "plans.db").string(); }

  std::filesystem::path dir_;
};

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

TEST_F(DaemonIntegration, UploadTuneMultiplyThenRestartHitsThePlanCache) {
  const auto matrix = banded_matrix(200'000, 11);
  ASSERT_GT(matrix.nnz() * 12, 4 << 20) << "the upload must exceed gRPC's 4 MB message limit";
  const auto x = random_values(matrix.cols, 12);
  const auto y0 = random_values(matrix.rows, 13);
  std::vector<double> expected = y0;
  reference_spmv(matrix, x.data(), expected.data(), 1.5, 0.25);

  std::string first_plan;
  {
    auto daemon = start();
    SpmvClient client(daemon->address());
    EXPECT_TRUE(client.healthy());
    const auto info = client.upload(matrix, Precision::fp64, "banded");
    EXPECT_EQ(info.nnz(), matrix.nnz());
    EXPECT_EQ(info.fingerprint(), structural_fingerprint(matrix).hex());
    const auto tuned = client.tune(info.handle());
    EXPECT_FALSE(tuned.cache_hit());
    EXPECT_GT(tuned.plan().measured_ms(), 0.0);
    first_plan = tuned.plan().format();

    const auto reply = client.multiply(info.handle(), 1.5, 0.25, {x}, {y0});
    ASSERT_EQ(reply.y_size(), 1);
    ASSERT_EQ(reply.y(0).values_size(), matrix.rows);
    double worst = 0.0;
    for (std::int64_t r = 0; r < matrix.rows; ++r)
      worst = std::max(worst, std::abs(reply.y(0).values(static_cast<int>(r)) - expected[r]));
    EXPECT_LT(worst, 1e-12);
    EXPECT_EQ(daemon->stop(SIGTERM), 0);
  }
  {
    auto daemon = start();
    SpmvClient client(daemon->address());
    const auto info = client.upload(matrix, Precision::fp64, "banded again");
    const auto tuned = client.tune(info.handle());
    EXPECT_TRUE(tuned.cache_hit()) << "the plan cache survives a restart";
    EXPECT_EQ(tuned.plan().format(), first_plan);
    // fp32 is a different key: a miss.
    const auto single = client.upload(matrix, Precision::fp32, "banded fp32");
    EXPECT_FALSE(client.tune(single.handle()).cache_hit());
    EXPECT_EQ(daemon->stop(SIGTERM), 0);
  }
}

// Issue 17: the first multiply never waits for tuning. The tuning is made slow on purpose (an
// exhaustive search with 1000 timed runs per candidate: seconds on the CPU backend) so that the
// multiplies issued right after the upload find the default plan serving.
TEST_F(DaemonIntegration, AMatrixIsMultipliableAtOnceAndItsTunedPlanIsSwappedInWhenReady) {
  auto daemon = start({"--tune-mode", "exhaustive", "--tune-timed-runs", "1000"});
  SpmvClient client(daemon->address());
  const auto matrix = banded_matrix(50'000, 21);
  const auto x = random_values(matrix.cols, 22);
  std::vector<double> expected(static_cast<std::size_t>(matrix.rows));
  reference_spmv(matrix, x.data(), expected.data(), 1.0, 0.0);
  const auto check = [&](const v1::MultiplyReply& reply) {
    ASSERT_EQ(reply.y(0).values_size(), matrix.rows);
    for (std::int64_t r = 0; r < matrix.rows; ++r)
      ASSERT_NEAR(reply.y(0).values(static_cast<int>(r)), expected[r], 1e-12) << "row " << r;
  };

  const auto info = client.upload(matrix, Precision::fp64, "served at once");
  const auto first = client.multiply(info.handle(), 1.0, 0.0, {x});
  check(first);
  EXPECT_TRUE(first.plan().default_plan()) << "tuning seconds long finished before the first "
                                              "multiply: the daemon made the multiply wait";
  EXPECT_EQ(first.plan().format(), "cpu_csr");
  // Multiply on while the background tuning runs; every y is right, and the plan changes.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(2);
  int multiplies = 1;
  v1::MultiplyReply reply = first;
  while (reply.plan().default_plan() && std::chrono::steady_clock::now() < deadline) {
    reply = client.multiply(info.handle(), 1.0, 0.0, {x});
    check(reply);
    ++multiplies;
  }
  ASSERT_FALSE(reply.plan().default_plan()) << "the tuned plan was never swapped in";
  EXPECT_GT(multiplies, 1);
  std::printf("%d multiplies served, all correct, before the tuned plan (%s, %s) arrived\n",
              multiplies, reply.plan().format().c_str(), reply.plan().tuning().mode().c_str());
  EXPECT_EQ(reply.plan().tuning().mode(), "exhaustive");
  EXPECT_GT(reply.plan().measured_ms(), 0.0);
  // A Tune request gets the same plan, without tuning again.
  const auto tuned = client.tune(info.handle());
  EXPECT_EQ(tuned.plan().plan_json(), reply.plan().plan_json());
  EXPECT_EQ(daemon->stop(SIGTERM), 0);
}

TEST_F(DaemonIntegration, ASecondDaemonOnTheSameDatabaseGetsACacheHit) {
  auto first = start();
  auto second = start();
  const auto matrix = banded_matrix(2000, 31);
  SpmvClient a(first->address()), b(second->address());
  const auto tuned = a.tune(a.upload(matrix, Precision::fp64, "on a").handle());
  EXPECT_FALSE(tuned.cache_hit());
  const auto hit = b.tune(b.upload(matrix, Precision::fp64, "on b").handle());
  EXPECT_TRUE(hit.cache_hit());
  EXPECT_EQ(hit.plan().plan_json(), tuned.plan().plan_json());
  EXPECT_EQ(hit.plan().tuning().mode(), tuned.plan().tuning().mode());
  EXPECT_EQ(first->stop(SIGTERM), 0);
  EXPECT_EQ(second->stop(SIGTERM), 0);
}

TEST_F(DaemonIntegration, MatrixMarketUploadPlainAndGzippedFromSharedMatrices) {
  const std::string path = std::string(SPMVD_SHARED_MATRICES) + "/cage11.mtx.gz";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "no " << path;
  auto daemon = start();
  SpmvClient client(daemon->address());
  std::ifstream in(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto info = client.upload_matrix_market(bytes, Precision::fp64, "cage11");
  EXPECT_EQ(info.rows(), 39082);
  EXPECT_EQ(info.nnz(), 559722);
  const auto reply = client.multiply(info.handle(), 1.0, 0.0, {random_values(info.cols(), 1)});
  EXPECT_EQ(reply.y(0).values_size(), info.rows());
}

TEST_F(DaemonIntegration, BadRequestsGetPreciseStatusesAndTheDaemonKeepsServing) {
  auto daemon = start({"--max-message-bytes", std::to_string(4 << 20)});
  SpmvClient client(daemon->address());
  const auto matrix = banded_matrix(1000, 3);
  const auto good = client.upload(matrix, Precision::fp64, "good");
  client.tune(good.handle());

  expect_rpc_error([&] { client.tune("00000000000000000000000000000000"); },
                   grpc::StatusCode::NOT_FOUND, "no resident matrix has handle");
  expect_rpc_error([&] { client.multiply(good.handle(), 1, 0, {random_values(999, 1)}); },
                   grpc::StatusCode::INVALID_ARGUMENT, "x[0] has 999 entries, the matrix has 1000 columns");
  expect_rpc_error(
      [&] { client.upload_matrix_market("%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 1\n", Precision::fp64); },
      grpc::StatusCode::INVALID_ARGUMENT, "line");
  expect_rpc_error(
      [&] { client.upload_matrix_market("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 nan\n", Precision::fp64); },
      grpc::StatusCode::INVALID_ARGUMENT, "line 3");
  auto bad_columns = matrix;
  bad_columns.col_indices[10] = 5000;
  expect_rpc_error([&] { client.upload(bad_columns, Precision::fp64); },
                   grpc::StatusCode::INVALID_ARGUMENT, "column index 5000");
  // One message above --max-message-bytes: gRPC refuses it before our code sees it.
  expect_rpc_error([&] { client.multiply(good.handle(), 1, 0, std::vector<std::vector<double>>(1, random_values(600'000, 2))); },
                   grpc::StatusCode::RESOURCE_EXHAUSTED, "");

  // Still serving, the good matrix still resident and its plan still cached.
  EXPECT_TRUE(client.healthy());
  EXPECT_EQ(client.multiply(good.handle(), 1, 0, {random_values(1000, 4)}).y(0).values_size(), 1000);
  ASSERT_EQ(client.list().size(), 1u);
  EXPECT_EQ(daemon->stop(SIGTERM), 0);
  SqlitePlanStore store({.path = database()});
  EXPECT_EQ(store.list(10).size(), 1u) << "bad input touched nothing in the plan cache";
}

TEST_F(DaemonIntegration, UploadCutOffHalfWayKeepsNothing) {
  auto daemon = start();
  SpmvClient client(daemon->address());
  const auto matrix = banded_matrix(50'000, 5);
  {
    // Header and the first chunk, then the client goes away.
    auto channel = grpc::CreateChannel(daemon->address(), grpc::InsecureChannelCredentials());
    auto stub = v1::Spmv::NewStub(channel);
    grpc::ClientContext context;
    v1::UploadReply reply;
    auto writer = stub->Upload(&context, &reply);
    v1::UploadChunk chunk;
    auto* header = chunk.mutable_header();
    header->set_encoding(v1::UploadHeader::CSR);
    header->set_precision(v1::FP64);
    header->set_rows(matrix.rows);
    header->set_cols(matrix.cols);
    header->set_nnz(matrix.nnz());
    ASSERT_TRUE(writer->Write(chunk));
    chunk.Clear();
    chunk.mutable_csr()->mutable_row_offsets()->Add(matrix.row_offsets.begin(), matrix.row_offsets.begin() + 1000);
    ASSERT_TRUE(writer->Write(chunk));
    context.TryCancel();
    EXPECT_FALSE(writer->Finish().ok());
  }
  {
    // The stream closed early but cleanly: the daemon names what is missing.
    grpc::ClientContext context;
    auto stub = v1::Spmv::NewStub(grpc::CreateChannel(daemon->address(), grpc::InsecureChannelCredentials()));
    v1::UploadReply reply;
    auto writer = stub->Upload(&context, &reply);
    v1::UploadChunk chunk;
    auto* header = chunk.mutable_header();
    header->set_encoding(v1::UploadHeader::CSR);
    header->set_precision(v1::FP64);
    header->set_rows(4);
    header->set_cols(4);
    header->set_nnz(4);
    writer->Write(chunk);
    writer->WritesDone();
    const auto status = writer->Finish();
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_NE(status.error_message().find("ended after 0 of 5 row_offsets"), std::string::npos)
        << status.error_message();
  }
  EXPECT_TRUE(client.list().empty());
  EXPECT_TRUE(client.healthy());
}

TEST_F(DaemonIntegration, SigtermLetsTheInFlightRequestFinish) {
  // An exhaustive search with many timed runs takes a while, so SIGTERM arrives during it.
  auto daemon = start({"--tune-mode", "exhaustive", "--tune-timed-runs", "400",
                       "--shutdown-grace-ms", "60000"});
  SpmvClient client(daemon->address());
  const auto info = client.upload(banded_matrix(200'000, 8), Precision::fp64);
  auto in_flight = std::async(std::launch::async, [&] { return client.tune(info.handle()); });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  ASSERT_EQ(in_flight.wait_for(std::chrono::seconds(0)), std::future_status::timeout)
      << "tuning finished before the signal; the test did not test draining";
  const int exit_code = daemon->stop(SIGTERM);
  const auto reply = in_flight.get();  // completed, not cancelled
  EXPECT_GT(reply.plan().measured_ms(), 0.0);
  EXPECT_EQ(exit_code, 0);
  SqlitePlanStore store({.path = database()});
  EXPECT_EQ(store.list(10).size(), 1u) << "the drained request's plan was stored";
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

TEST_F(DaemonIntegration, CalibrationIsStreamedStoredAndReusedAfterRestart) {
  std::string calibration;
  {
    auto daemon = start();
    AdminClient admin(daemon->address());
    EXPECT_FALSE(admin.show_models().calibrated());
    std::vector<v1::CalibrateProgress> progress;
    admin.calibrate([&](const v1::CalibrateProgress& p) { progress.push_back(p); });
    ASSERT_GE(progress.size(), 2u);
    EXPECT_TRUE(progress.back().finished());
    const auto models = admin.show_models();
    ASSERT_TRUE(models.calibrated());
    EXPECT_NE(models.calibration_json().find(models.device()), std::string::npos);
    calibration = models.calibration_json();

    // Tuning with models stores a plan that spmvctl lists.
    SpmvClient client(daemon->address());
    const auto info = client.upload(banded_matrix(20'000, 2), Precision::fp64);
    const auto tuned = client.tune(info.handle());
    const auto plans = admin.list_plans(10);
    ASSERT_EQ(plans.size(), 1u);
    EXPECT_EQ(plans[0].fingerprint(), info.fingerprint());
    EXPECT_EQ(plans[0].plan().format(), tuned.plan().format());

    int exit_code = -1;
    const auto shown = run_command(std::string(SPMVCTL_PATH) + " --server " + daemon->address() +
                                       " model show", exit_code);
    EXPECT_EQ(exit_code, 0) << shown;
    EXPECT_NE(shown.find("fp64 models"), std::string::npos) << shown;
    EXPECT_NE(shown.find("rms %"), std::string::npos) << shown;  // a family's table
    const auto shown_json = run_command(std::string(SPMVCTL_PATH) + " --server " +
                                            daemon->address() + " model show --json", exit_code);
    EXPECT_EQ(exit_code, 0) << shown_json;
    const auto summaries = nlohmann::json::parse(shown_json, nullptr, false);
    ASSERT_TRUE(summaries.is_array()) << shown_json;
    ASSERT_EQ(summaries.size(), 2u) << shown_json;
    EXPECT_EQ(summaries[1].value("precision", ""), "fp64");
    EXPECT_FALSE(summaries[1].value("fits", nlohmann::json::array()).empty()) << shown_json;
    const auto plots_dir = dir_ / "plots";
    const auto plotted = run_command(std::string(SPMVCTL_PATH) + " --server " + daemon->address() +
                                         " model plot --out " + plots_dir.string(), exit_code);
    EXPECT_EQ(exit_code, 0) << plotted;
    std::size_t svgs = 0;
    for (const auto& entry : std::filesystem::directory_iterator(plots_dir))
      svgs += entry.path().extension() == ".svg";
    EXPECT_GE(svgs, 1u) << plotted;
    EXPECT_EQ(daemon->stop(SIGTERM), 0);
  }
  {
    // Calibrate-on-start finds the stored calibration and uses it as it is.
    auto daemon = start({"--calibrate-on-start", "true"});
    AdminClient admin(daemon->address());
    EXPECT_EQ(admin.show_models().calibration_json(), calibration);
    EXPECT_EQ(daemon->stop(SIGTERM), 0);
  }
}

TEST_F(DaemonIntegration, SpmvRunChecksAgainstTheCpuReference) {
  const std::string path = std::string(SPMVD_SHARED_MATRICES) + "/bcsstk16.mtx.gz";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "no " << path;
  auto daemon = start();
  const std::string command = std::string(SPMV_CLI_PATH) + " --server " + daemon->address() +
                              " run " + path + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string output;
  char buffer[4096];
  while (fgets(buffer, sizeof buffer, pipe)) output += buffer;
  const int status = pclose(pipe);
  EXPECT_EQ(WEXITSTATUS(status), 0) << output;
  EXPECT_NE(output.find("cache:     miss"), std::string::npos) << output;
  EXPECT_NE(output.find("(ok, tolerance"), std::string::npos) << output;
}

}  // namespace
}  // namespace spmvd
