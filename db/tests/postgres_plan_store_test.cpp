// PostgreSQL's own behaviour: connection errors, migrations, daemons starting together. What
// every backend promises is in plan_store_conformance_test.cpp.

#include "db/postgres_plan_store.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "core/error.hpp"
#include "db/postgres_migrations.hpp"
#include "db/tests/store_backends.hpp"

namespace spmvd {
namespace {

TEST(PostgresPlanStore, AnUnreachableServerIsUnavailableAndThePasswordIsNotShown) {
  // Port 1 on loopback: nothing listens there, so the connection is refused at once.
  const std::string url = "postgresql://spmvd:hunter2@127.0.0.1:1/plans";
  try {
    PostgresPlanStore store({.url = url});
    FAIL() << "opened a store on a port nothing listens on";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::unavailable);
    EXPECT_THAT(e.what(), ::testing::StartsWith("plan store: cannot connect to PostgreSQL "
                                                "postgresql://spmvd:***@127.0.0.1:1/plans: "));
    EXPECT_THAT(e.what(), ::testing::HasSubstr("Connection refused"));
    EXPECT_THAT(e.what(), ::testing::Not(::testing::HasSubstr("hunter2")));
  }
}

class PostgresSchema : public ::testing::Test {
 protected:
  void SetUp() override {
    backend_ = test::make_postgres_backend();
    if (!backend_) {
      GTEST_SKIP() << "PostgreSQL backend not configured: set " << test::kPostgresUrlVariable
                   << " (deploy/run-tests.sh starts a server)";
    }
  }
  std::unique_ptr<test::StoreBackend> backend_;
};

TEST_F(PostgresSchema, DaemonsOpeningANewDatabaseTogetherMigrateItOnce) {
  std::vector<std::thread> daemons;
  std::vector<std::string> failures(4);
  for (std::size_t i = 0; i < failures.size(); ++i) {
    daemons.emplace_back([&, i] {
      try {
        backend_->open();
      } catch (const std::exception& e) {
        failures[i] = e.what();
      }
    });
  }
  for (std::thread& t : daemons) t.join();
  for (const std::string& failure : failures) EXPECT_EQ(failure, "");
  EXPECT_EQ(backend_->query("SELECT COUNT(*) FROM schema_version"),
            std::to_string(postgres_migrations().size()));
  EXPECT_EQ(backend_->query("SELECT MAX(version) FROM schema_version"),
            std::to_string(postgres_latest_schema_version()));
}

TEST_F(PostgresSchema, ADatabaseWithAFutureSchemaVersionIsRefused) {
  backend_->open();
  const int future = postgres_latest_schema_version() + 1;
  backend_->exec("INSERT INTO schema_version VALUES (" + std::to_string(future) +
                 ", 'from a newer spmvd', 0)");
  try {
    backend_->open();
    FAIL() << "opened a database with a newer schema";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::failed_precondition);
    EXPECT_THAT(e.what(), ::testing::HasSubstr(
                              "has schema version " + std::to_string(future) + ", newer than the " +
                              std::to_string(postgres_latest_schema_version()) +
                              " this binary knows; upgrade spmvd or use another database"));
  }
}

}  // namespace
}  // namespace spmvd
