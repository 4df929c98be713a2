// Several writers on one file, and a writer that dies: the guarantees of WAL + busy timeout.

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

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

}  // namespace
}  // namespace spmvd
