// Two real daemons, each with its own SQLite file, sharing a real PostgreSQL cluster store: a
// plan tuned through one is a cache hit on the other; with PostgreSQL stopped both keep
// serving; once it is back, what they tuned in the meantime arrives in it.

#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <random>
#include <thread>

#include "client/spmv_client.hpp"
#include "db/postgres_plan_store.hpp"
#include "db/sqlite_plan_store.hpp"
#include "tests/integration/daemon_process.hpp"
#include "tests/integration/test_postgres_server.hpp"

namespace spmvd {
namespace {

using testing::DaemonProcess;
using testing::TestPostgresServer;

// A banded matrix (9 nonzeros per row): its row count alone makes its fingerprint distinct.
CsrMatrix<double> banded_matrix(std::int64_t rows) {
  std::mt19937_64 rng(static_cast<std::uint64_t>(rows));
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

// Uploads, tunes and multiplies once, checking y against the CPU reference; returns whether
// the plan came from the cache.
bool tune_and_multiply(SpmvClient& client, const CsrMatrix<double>& matrix) {
  const auto info = client.upload(matrix, Precision::fp64, "banded");
  const bool hit = client.tune(info.handle()).cache_hit();
  std::vector<double> x(static_cast<std::size_t>(matrix.cols), 0.5);
  std::vector<double> expected(static_cast<std::size_t>(matrix.rows), 0.0);
  reference_spmv(matrix, x.data(), expected.data(), 1.0, 0.0);
  const auto reply = client.multiply(info.handle(), 1.0, 0.0, {x});
  EXPECT_EQ(reply.y(0).values_size(), matrix.rows);
  double worst = 0.0;
  for (std::int64_t r = 0; r < matrix.rows; ++r) {
    worst = std::max(worst, std::abs(reply.y(0).values(static_cast<int>(r)) - expected[r]));
  }
  EXPECT_LT(worst, 1e-12);
  client.release(info.handle());
  return hit;
}

class ClusterIntegration : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!TestPostgresServer::available()) {
      GTEST_SKIP() << "PostgreSQL server binaries not installed (apt-get install postgresql; "
                      "SPMVD_POSTGRES_BINDIR names another directory)";
    }
    dir_ = std::filesystem::temp_directory_path() /
           ("spmvd-cluster-it-" + std::to_string(getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_ / "a");
    std::filesystem::create_directories(dir_ / "b");
    postgres_ = std::make_unique<TestPostgresServer>();
  }
  void TearDown() override {
    postgres_.reset();
    std::filesystem::remove_all(dir_);
  }

  std::unique_ptr<DaemonProcess> start(const std::string& name) {
    const std::string work = (dir_ / name).string();
    return std::make_unique<DaemonProcess>(
        SPMVD_DAEMON_PATH, work,
        std::vector<std::string>{"--database", "sqlite://" + work + "/plans.db",
                                 "--cluster-store", postgres_->url(),
                                 "--cluster-store-retry-max-ms", "500", "--device", "cpu",
                                 "--tune-timed-runs", "3", "--calibrate-on-start", "false"});
  }

  // The plans PostgreSQL holds, polled until there are `count` (or 30 s pass).
  std::size_t wait_for_cluster_plans(std::size_t count) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    std::size_t seen = 0;
    while (std::chrono::steady_clock::now() < deadline) {
      try {
        PostgresPlanStore cluster({.url = postgres_->url()});
        seen = cluster.list(100).size();
        if (seen >= count) return seen;
      } catch (const std::exception&) {
        // not up yet
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return seen;
  }

  std::filesystem::path dir_;
  std::unique_ptr<TestPostgresServer> postgres_;
};

TEST_F(ClusterIntegration, APlanTunedOnOneDaemonIsAHitOnTheOtherAndOutagesLoseNothing) {
  auto daemon_a = start("a");
  auto daemon_b = start("b");
  SpmvClient a(daemon_a->address());
  SpmvClient b(daemon_b->address());
  const auto first = banded_matrix(2000);
  const auto second = banded_matrix(3000);
  const auto third = banded_matrix(4000);

  EXPECT_FALSE(tune_and_multiply(a, first)) << "nothing tuned yet anywhere";
  EXPECT_TRUE(tune_and_multiply(b, first)) << "b finds a's plan in the cluster store";
  ASSERT_EQ(wait_for_cluster_plans(1), 1u);

  postgres_->stop();
  EXPECT_FALSE(tune_and_multiply(a, second)) << "tuned on a during the outage";
  EXPECT_FALSE(tune_and_multiply(b, third)) << "tuned on b during the outage";
  EXPECT_TRUE(tune_and_multiply(b, first)) << "b's local copy serves during the outage";
  EXPECT_TRUE(a.healthy());
  EXPECT_TRUE(b.healthy());

  postgres_->start_again();
  EXPECT_EQ(wait_for_cluster_plans(3), 3u) << "the writes both daemons queued arrive";
  EXPECT_TRUE(tune_and_multiply(b, second)) << "a's outage plan is now a hit on b";
  EXPECT_TRUE(tune_and_multiply(a, third)) << "b's outage plan is now a hit on a";

  EXPECT_EQ(daemon_a->stop(SIGTERM), 0);
  EXPECT_EQ(daemon_b->stop(SIGTERM), 0);
  // Each local file holds all three plans now: its own and the copies of the other's.
  for (const char* name : {"a", "b"}) {
    SqlitePlanStore local({.path = (dir_ / name / "plans.db").string()});
    EXPECT_EQ(local.list(100).size(), 3u) << name;
  }
}

}  // namespace
}  // namespace spmvd
