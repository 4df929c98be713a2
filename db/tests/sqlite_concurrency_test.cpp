// Several writers on one file, and a writer that dies: the guarantees of WAL + busy timeout.

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "db/sqlite_plan_store.hpp"
#include "db/tests/test_plans.hpp"
#include "db/tests/test_sqlite.hpp"

namespace spmvd {
namespace {

using test::key_of;
using test::plan_for;

TEST(SqlitePlanStoreConcurrency, TwoStoresOnOneFileFromTwoThreadsKeepEveryPlan) {
  test::TempDir dir;
  const std::string path = dir.file("plans.db");
  constexpr std::uint64_t kPlansPerWriter = 200;
  const auto writer = [&](std::string device) {
    // Each thread opens its own store (its own connection) on the still-missing file, so the
    // two also race to create and migrate it.
    SqlitePlanStore store({.path = path});
    for (std::uint64_t i = 0; i < kPlansPerWriter; ++i) {
      const PlanKey key = key_of(i, device);
      store.put(key, plan_for(key, static_cast<std::uint32_t>(i)));
    }
  };
  std::exception_ptr failure[2];
  std::thread a([&] {
    try {
      writer("gpu|a");
    } catch (...) {
      failure[0] = std::current_exception();
    }
  });
  std::thread b([&] {
    try {
      writer("gpu|b");
    } catch (...) {
      failure[1] = std::current_exception();
    }
  });
  a.join();
  b.join();
  for (const auto& f : failure) {
    if (f) {
      try {
        std::rethrow_exception(f);
      } catch (const std::exception& e) {
        FAIL() << "writer threw: " << e.what();
      }
    }
  }

  SqlitePlanStore reader({.path = path});
  EXPECT_EQ(reader.list(1000).size(), 2 * kPlansPerWriter);
  for (const std::string device : {"gpu|a", "gpu|b"}) {
    for (std::uint64_t i = 0; i < kPlansPerWriter; ++i) {
      const PlanKey key = key_of(i, device);
      ASSERT_EQ(reader.find(key), plan_for(key, static_cast<std::uint32_t>(i))) << to_string(key);
    }
  }
}

TEST(SqlitePlanStoreConcurrency, OneStoreSharedByThreadsKeepsEveryPlan) {
  test::TempDir dir;
  SqlitePlanStore store({.path = dir.file("plans.db")});
  std::vector<std::thread> threads;
  for (std::uint64_t t = 0; t < 4; ++t) {
    threads.emplace_back([&store, t] {
      for (std::uint64_t i = 0; i < 50; ++i) {
        const PlanKey key = key_of(t * 1000 + i);
        store.put(key, plan_for(key));
        (void)store.find(key);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(store.list(1000).size(), 200u);
}

TEST(SqlitePlanStoreConcurrency, PutSurvivesTheProcessExitingWithoutClosing) {
  test::TempDir dir;
  const std::string path = dir.file("plans.db");
  const PlanKey key = key_of(42);
  { SqlitePlanStore create({.path = path}); }  // the schema exists before the child writes

  const pid_t child = fork();
  ASSERT_NE(child, -1);
  if (child == 0) {
    // In the child: no gtest assertions, no destructors, no atexit handlers, no close.
    try {
      auto* store = new SqlitePlanStore({.path = path});
      store->put(key, plan_for(key));
      _exit(0);
    } catch (...) {
      _exit(1);
    }
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 0) << "the child could not put its plan";

  SqlitePlanStore reopened({.path = path});
  EXPECT_EQ(reopened.find(key), plan_for(key));
}

// Daemons are processes: three of them, two writer threads each, race to store the same keys
// with candidates in different orders. Every child finishes without an error, and the file
// holds the winner of each key (plan_store.hpp) and passes its integrity check.
TEST(SqlitePlanStoreConcurrency, ProcessesRacingOnTheSameKeysLeaveTheWinningPlans) {
  test::TempDir dir;
  const std::string path = dir.file("plans.db");
  constexpr std::uint64_t kKeys = 20;
  constexpr std::uint32_t kSeeds = 5;
  const auto candidates = [](const PlanKey& key) {
    std::vector<Plan> plans;
    for (std::uint32_t seed = 1; seed <= kSeeds; ++seed) plans.push_back(plan_for(key, seed));
    return plans;
  };
  std::vector<pid_t> children;
  for (unsigned process = 0; process < 3; ++process) {
    const pid_t child = fork();
    ASSERT_NE(child, -1);
    if (child == 0) {
      // In the child: no gtest assertions; the exit status reports.
      std::atomic<bool> failed{false};
      std::vector<std::thread> threads;
      for (unsigned t = 0; t < 2; ++t) {
        threads.emplace_back([&, t] {
          try {
            SqlitePlanStore store({.path = path});
            std::mt19937 rng(process * 2 + t);
            for (std::uint64_t k = 0; k < kKeys; ++k) {
              std::vector<Plan> plans = candidates(key_of(k));
              std::shuffle(plans.begin(), plans.end(), rng);
              for (const Plan& plan : plans) store.put(key_of(k), plan);
            }
          } catch (...) {
            failed = true;
          }
        });
      }
      for (std::thread& thread : threads) thread.join();
      _exit(failed ? 1 : 0);
    }
    children.push_back(child);
  }
  for (const pid_t child : children) {
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "a writer process failed";
  }
  test::RawDb raw(path);
  EXPECT_EQ(raw.query("PRAGMA integrity_check"), "ok");
  EXPECT_EQ(raw.query("SELECT COUNT(*) FROM plans"), std::to_string(kKeys));
  SqlitePlanStore store({.path = path});
  for (std::uint64_t k = 0; k < kKeys; ++k) {
    // measured_ms = 1/3 + seed: seed 1 is the fastest candidate of every key.
    EXPECT_EQ(store.find(key_of(k)), plan_for(key_of(k), 1)) << to_string(key_of(k));
  }
}

}  // namespace
}  // namespace spmvd
