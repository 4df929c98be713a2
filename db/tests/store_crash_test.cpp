// A daemon killed (SIGKILL) while several of its threads write plans: every reopened store is
// intact and every plan in it decodes whole. Run against SQLite (with PRAGMA integrity_check)
// and, when SPMVD_TEST_POSTGRES_URL is set, against PostgreSQL.

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <random>
#include <thread>
#include <vector>

#include "db/tests/store_backends.hpp"
#include "db/tests/test_plans.hpp"

namespace spmvd {
namespace {

using test::key_of;
using test::plan_for;

constexpr int kRounds = 12;
constexpr int kWriterThreads = 4;

// The plan every writer stores under key: distinct per key, so a plan read back can be checked
// field by field against what was written.
Plan expected_plan(const PlanKey& key) {
  return plan_for(key, static_cast<std::uint32_t>(key.fingerprint.low % 97 + 1));
}

// In the child: writer threads put plans until the process is killed. Only async-signal-free
// code paths matter here: the child never returns.
[[noreturn]] void write_until_killed(test::StoreBackend& backend, int round) {
  std::vector<std::thread> threads;
  for (int t = 0; t < kWriterThreads; ++t) {
    threads.emplace_back([&backend, round, t] {
      try {
        const auto store = backend.open();  // one store (connection) per thread: daemons
        for (std::uint64_t i = 0;; ++i) {
          // Fresh keys, and keys every thread and round rewrites (upserts on existing rows).
          const std::uint64_t low = i % 3 == 0 ? i % 40
                                               : 1'000'000ULL * static_cast<std::uint64_t>(round) +
                                                     10'000ULL * static_cast<std::uint64_t>(t) + i;
          const PlanKey key = key_of(low);
          store->put(key, expected_plan(key));
        }
      } catch (...) {
        _exit(3);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  _exit(0);
}

class StoreCrash : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    backend_ = std::string(GetParam()) == "Sqlite" ? test::make_sqlite_backend()
                                                   : test::make_postgres_backend();
    if (!backend_) {
      GTEST_SKIP() << "PostgreSQL backend not configured: set " << test::kPostgresUrlVariable
                   << " (deploy/run-tests.sh starts a server)";
    }
    backend_->open();  // the schema exists before the first child writes
  }
  std::unique_ptr<test::StoreBackend> backend_;
};

TEST_P(StoreCrash, EveryStoreReopenedAfterSigkillIsIntactAndItsPlansWhole) {
  const unsigned seed = ::testing::UnitTest::GetInstance()->random_seed();
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> lifetime_ms(30, 150);
  std::size_t last_rows = 0;
  for (int round = 0; round < kRounds; ++round) {
    const pid_t child = fork();
    ASSERT_NE(child, -1);
    if (child == 0) write_until_killed(*backend_, round);
    std::this_thread::sleep_for(std::chrono::milliseconds(lifetime_ms(rng)));
    ASSERT_EQ(kill(child, SIGKILL), 0);
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
        << "round " << round << ": the writer exited on its own (status " << status
        << "), so it was not killed mid-write";
    backend_->wait_for_dead_writers();

    if (std::string(GetParam()) == "Sqlite") {
      EXPECT_EQ(backend_->query("PRAGMA integrity_check"), "ok") << "round " << round;
    }
    const std::string raw_rows = backend_->query("SELECT COUNT(*) FROM plans");
    const auto store = backend_->open();
    const std::vector<StoredPlan> plans = store->list(1'000'000);
    // list drops undecodable rows: equal counts mean none was torn.
    EXPECT_EQ(std::to_string(plans.size()), raw_rows) << "round " << round << ", seed " << seed;
    for (const StoredPlan& stored : plans) {
      ASSERT_EQ(stored.plan, expected_plan(stored.key))
          << "round " << round << ": " << to_string(stored.key);
    }
    EXPECT_GE(plans.size(), last_rows) << "round " << round << ": committed plans vanished";
    last_rows = plans.size();
  }
  EXPECT_GT(last_rows, 40u) << "the writers stored next to nothing: the test proved little";
}

INSTANTIATE_TEST_SUITE_P(Backends, StoreCrash, ::testing::Values("Sqlite", "Postgres"),
                         [](const auto& info) { return std::string(info.param); });

}  // namespace
}  // namespace spmvd
