#include "db/sqlite_plan_store.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "db/sqlite_migrations.hpp"
#include "db/tests/test_plans.hpp"
#include "db/tests/test_sqlite.hpp"

// SQLite's own behaviour: files, WAL, migrations, open errors. What every backend promises is
// in plan_store_conformance_test.cpp, which runs against SQLite too.

namespace spmvd {
namespace {

using test::key_of;
using test::plan_for;

// The Error that f throws; fails the test when it throws nothing.
template <typename F>
std::optional<Error> error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "no spmvd::Error thrown";
  return std::nullopt;
}

TEST(SqlitePlanStore, ReopenedFileFindsThePlan) {
  test::TempDir dir;
  const std::string path = dir.file("plans.db");
  const PlanKey key = key_of(7, "gpu|NVIDIA H100 80GB HBM3|cc9.0|sm132");
  {
    SqlitePlanStore store({.path = path});
    store.put(key, plan_for(key, 5));
  }
  SqlitePlanStore reopened({.path = path});
  EXPECT_EQ(reopened.find(key), plan_for(key, 5));
  const std::vector<StoredPlan> listed = reopened.list(10);
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0].key, key);
  EXPECT_EQ(listed[0].plan, plan_for(key, 5));
}

TEST(SqlitePlanStore, RowWithAMissingFieldIsDroppedAndNotFound) {
  test::TempDir dir;
  const std::string path = dir.file("plans.db");
  const PlanKey key = key_of(1);
  SqlitePlanStore store({.path = path});
  store.put(key, plan_for(key));
  test::RawDb raw(path);
  raw.exec("UPDATE plans SET plan_json = json_remove(plan_json, '$.launch.block_size')");
  EXPECT_EQ(store.find(key), std::nullopt);
  EXPECT_EQ(raw.query("SELECT COUNT(*) FROM plans"), "0");
}

TEST(SqlitePlanStore, StoresAPartitionsEntriesAsLittleEndianInt32) {
  test::TempDir dir;
  const std::string path = dir.file("plans.db");
  const PlanKey key = key_of(1);
  Plan plan = plan_for(key);
  plan.partition = std::make_shared<const PlanPartition>(PlanPartition{"rcm", {1, -2, 0x01020304}});
  SqlitePlanStore store({.path = path});
  store.put(key, plan);
  test::RawDb raw(path);
  EXPECT_EQ(raw.query("SELECT hex(entries) FROM plan_partitions"), "01000000FEFFFFFF04030201");
}

TEST(SqlitePlanStore, FreshFileIsMigratedToTheLatestSchemaInWalMode) {
  test::TempDir dir;
  const std::string path = dir.file("plans.db");
  SqlitePlanStore store({.path = path});
  EXPECT_EQ(store.schema_version(), sqlite_latest_schema_version());
  test::RawDb raw(path);
  EXPECT_EQ(raw.query("PRAGMA journal_mode"), "wal");
  EXPECT_EQ(raw.query("SELECT MAX(version) FROM schema_version"),
            std::to_string(sqlite_latest_schema_version()));
  EXPECT_EQ(raw.query("SELECT COUNT(*) FROM schema_version"),
            std::to_string(sqlite_migrations().size()));
  // Reopening applies nothing twice.
  SqlitePlanStore reopened({.path = path});
  EXPECT_EQ(raw.query("SELECT COUNT(*) FROM schema_version"),
            std::to_string(sqlite_migrations().size()));
}

TEST(SqlitePlanStore, MigrationsAreNumberedFromOneWithoutGaps) {
  const auto migrations = sqlite_migrations();
  ASSERT_FALSE(migrations.empty());
  for (std::size_t i = 0; i < migrations.size(); ++i) {
    EXPECT_EQ(migrations[i].version, static_cast<int>(i + 1));
  }
  EXPECT_EQ(sqlite_latest_schema_version(), static_cast<int>(migrations.size()));
}

TEST(SqlitePlanStore, DatabaseWithAFutureSchemaVersionIsRefused) {
  test::TempDir dir;
  const std::string path = dir.file("plans.db");
  { SqlitePlanStore store({.path = path}); }
  const int future = sqlite_latest_schema_version() + 1;
  {
    test::RawDb raw(path);
    raw.exec("INSERT INTO schema_version (version, description, applied_ms) VALUES (" +
             std::to_string(future) + ", 'from a newer spmvd', 0)");
  }
  const auto error = error_of([&] { SqlitePlanStore store({.path = path}); });
  ASSERT_TRUE(error);
  EXPECT_EQ(error->code(), ErrorCode::failed_precondition);
  EXPECT_EQ(std::string(error->what()),
            "plan store: SQLite database '" + path + "' has schema version " +
                std::to_string(future) + ", newer than the " +
                std::to_string(sqlite_latest_schema_version()) +
                " this binary knows; upgrade spmvd or use another database file");
}

// A file written by a binary of schema version 1 (plans keyed without a model version): the
// upgrade keeps its calibrations and drops its plans, whose matrices are re-tuned once.
TEST(SqlitePlanStore, VersionOneFileIsUpgradedDroppingPlansWithoutAModelVersion) {
  test::TempDir dir;
  const std::string path = dir.file("plans.db");
  {
    test::RawDb raw(path);
    raw.exec("CREATE TABLE schema_version (version INTEGER PRIMARY KEY,"
             " description TEXT NOT NULL, applied_ms INTEGER NOT NULL)");
    raw.exec(sqlite_migrations()[0].sql);
    raw.exec("INSERT INTO schema_version VALUES (1, 'plans and calibrations', 0)");
    raw.exec("INSERT INTO plans VALUES ('" + key_of(1).fingerprint.hex() +
             "', 'gpu|test|cc9.0', 1, 3, 40001, 'x', '{}', 0.5, 0, 0)");
    raw.exec("INSERT INTO calibrations VALUES ('gpu|test|cc9.0', 12, '{\"fits\": 1}', 0)");
  }
  SqlitePlanStore store({.path = path});
  EXPECT_EQ(store.schema_version(), sqlite_latest_schema_version());
  EXPECT_EQ(store.list(10).size(), 0u);
  EXPECT_EQ(store.find_calibration("gpu|test|cc9.0", 12), R"({"fits": 1})");
  store.put(key_of(1), plan_for(key_of(1)));  // the new key shape works
  EXPECT_EQ(store.find(key_of(1)), plan_for(key_of(1)));
}

TEST(SqlitePlanStore, PathInAMissingDirectoryIsUnavailable) {
  test::TempDir dir;
  const std::string path = dir.file("no/such/dir/plans.db");
  const auto error = error_of([&] { SqlitePlanStore store({.path = path}); });
  ASSERT_TRUE(error);
  EXPECT_EQ(error->code(), ErrorCode::unavailable);
  EXPECT_EQ(std::string(error->what()),
            "plan store: cannot open SQLite database '" + path + "': unable to open database file");
}

TEST(SqlitePlanStore, FileThatIsNotADatabaseIsRefusedNamingThePath) {
  test::TempDir dir;
  const std::string path = dir.file("plans.db");
  {
    std::ofstream garbage(path);
    garbage << std::string(8192, 'x');
  }
  const auto error = error_of([&] { SqlitePlanStore store({.path = path}); });
  ASSERT_TRUE(error);
  EXPECT_EQ(error->code(), ErrorCode::internal);
  EXPECT_THAT(error->what(), testing::StartsWith("plan store '" + path + "': "));
  EXPECT_THAT(error->what(), testing::EndsWith(": file is not a database"));
}

TEST(SqlitePlanStore, CalibrationRoundTrips) {
  test::TempDir dir;
  const std::string path = dir.file("plans.db");
  {
    SqlitePlanStore store({.path = path});
    EXPECT_EQ(store.find_calibration("gpu|a", 1), std::nullopt);
    store.put_calibration("gpu|b", 1, R"({"ell": [1.5, 2.5]})");
    store.put_calibration("gpu|a", 2, R"({"csr": 0.25})");
    store.put_calibration("gpu|a", 1, R"({"csr": 0.5})");
    store.put_calibration("gpu|a", 1, R"({"csr": 0.75})");  // replaces
  }
  SqlitePlanStore store({.path = path});
  EXPECT_EQ(store.find_calibration("gpu|a", 1), R"({"csr": 0.75})");
  EXPECT_EQ(store.find_calibration("gpu|a", 2), R"({"csr": 0.25})");
  EXPECT_EQ(store.find_calibration("gpu|b", 1), R"({"ell": [1.5, 2.5]})");
  EXPECT_EQ(store.find_calibration("gpu|b", 2), std::nullopt);

  const std::vector<StoredCalibration> listed = store.list_calibrations();
  ASSERT_EQ(listed.size(), 3u);
  EXPECT_EQ(listed[0].device_signature, "gpu|a");
  EXPECT_EQ(listed[0].model_version, 1u);
  EXPECT_EQ(listed[0].model_json, R"({"csr": 0.75})");
  EXPECT_GT(listed[0].created_ms, 1'600'000'000'000);
  EXPECT_EQ(listed[1].device_signature, "gpu|a");
  EXPECT_EQ(listed[1].model_version, 2u);
  EXPECT_EQ(listed[2].device_signature, "gpu|b");
}

}  // namespace
}  // namespace spmvd
