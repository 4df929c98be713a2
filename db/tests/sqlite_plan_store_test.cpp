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

TEST(SqlitePlanStore, FindsWhatItPut) {
  SqlitePlanStore store({.path = ":memory:"});
  const PlanKey key = key_of(1);
  store.put(key, plan_for(key));
  EXPECT_EQ(store.find(key), plan_for(key));
}

TEST(SqlitePlanStore, FindOfAbsentKeyIsNullopt) {
  SqlitePlanStore store({.path = ":memory:"});
  store.put(key_of(1), plan_for(key_of(1)));
  EXPECT_EQ(store.find(key_of(2)), std::nullopt);
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

TEST(SqlitePlanStore, PutReplacesThePlanAndKeepsItsCreationTime) {
  SqlitePlanStore store({.path = ":memory:"});
  const PlanKey key = key_of(1);
  store.put(key, plan_for(key, 2));
  const std::vector<StoredPlan> first = store.list(10);
  ASSERT_EQ(first.size(), 1u);

  store.put(key, plan_for(key, 1));  // faster (measured_ms 1/3 + seed): wins
  EXPECT_EQ(store.find(key), plan_for(key, 1));
  const std::vector<StoredPlan> second = store.list(10);
  ASSERT_EQ(second.size(), 1u);
  EXPECT_EQ(second[0].plan, plan_for(key, 1));
  EXPECT_EQ(second[0].created_ms, first[0].created_ms);
  EXPECT_GE(second[0].updated_ms, first[0].updated_ms);
  EXPECT_GT(second[0].created_ms, 1'600'000'000'000);  // unix milliseconds, after 2020
}

TEST(SqlitePlanStore, KeysDifferingInOneComponentAreDistinct) {
  SqlitePlanStore store({.path = ":memory:"});
  const PlanKey base = key_of(1);
  PlanKey other_high = base;
  other_high.fingerprint.high ^= 1;
  const std::vector<PlanKey> keys{
      base,
      key_of(2),  // fingerprint low word
      other_high,
      key_of(1, "gpu|other"),
      key_of(1, base.device_signature, Precision::fp64),
      key_of(1, base.device_signature, base.precision, base.tuner_version + 1),
  };
  for (std::uint32_t i = 0; i < keys.size(); ++i) store.put(keys[i], plan_for(keys[i], i + 1));
  for (std::uint32_t i = 0; i < keys.size(); ++i) {
    EXPECT_EQ(store.find(keys[i]), plan_for(keys[i], i + 1)) << to_string(keys[i]);
  }
  EXPECT_EQ(store.list(100).size(), keys.size());
}

TEST(SqlitePlanStore, EraseRemovesOnlyThatKey) {
  SqlitePlanStore store({.path = ":memory:"});
  store.put(key_of(1), plan_for(key_of(1)));
  store.put(key_of(2), plan_for(key_of(2)));
  EXPECT_TRUE(store.erase(key_of(1)));
  EXPECT_FALSE(store.erase(key_of(1)));
  EXPECT_EQ(store.find(key_of(1)), std::nullopt);
  EXPECT_EQ(store.find(key_of(2)), plan_for(key_of(2)));
}

TEST(SqlitePlanStore, EraseAllForDeviceCountsAndKeepsOtherDevices) {
  SqlitePlanStore store({.path = ":memory:"});
  for (std::uint64_t i = 0; i < 3; ++i) store.put(key_of(i, "gpu|a"), plan_for(key_of(i, "gpu|a")));
  store.put(key_of(0, "gpu|b"), plan_for(key_of(0, "gpu|b")));
  EXPECT_EQ(store.erase_all_for_device("gpu|a"), 3u);
  EXPECT_EQ(store.erase_all_for_device("gpu|a"), 0u);
  EXPECT_EQ(store.find(key_of(1, "gpu|a")), std::nullopt);
  EXPECT_EQ(store.find(key_of(0, "gpu|b")), plan_for(key_of(0, "gpu|b")));
}

TEST(SqlitePlanStore, ListReturnsAtMostLimitPlansNewestFirst) {
  SqlitePlanStore store({.path = ":memory:"});
  for (std::uint64_t i = 0; i < 5; ++i) store.put(key_of(i), plan_for(key_of(i)));
  EXPECT_EQ(store.list(3).size(), 3u);
  EXPECT_EQ(store.list(0).size(), 0u);
  const std::vector<StoredPlan> all = store.list(100);
  ASSERT_EQ(all.size(), 5u);
  std::vector<std::uint64_t> lows;
  for (const StoredPlan& stored : all) lows.push_back(stored.key.fingerprint.low);
  std::sort(lows.begin(), lows.end());
  EXPECT_EQ(lows, (std::vector<std::uint64_t>{0, 1, 2, 3, 4}));
  EXPECT_TRUE(std::is_sorted(all.begin(), all.end(), [](const StoredPlan& a, const StoredPlan& b) {
    return a.updated_ms > b.updated_ms;
  }));
}

TEST(SqlitePlanStore, PutRefusesAPlanThatDisagreesWithItsKey) {
  SqlitePlanStore store({.path = ":memory:"});
  const PlanKey key = key_of(1);
  Plan plan = plan_for(key);
  plan.precision = Precision::fp64;
  const auto error = error_of([&] { store.put(key, plan); });
  ASSERT_TRUE(error);
  EXPECT_EQ(error->code(), ErrorCode::invalid_argument);
  EXPECT_EQ(std::string(error->what()),
            "plan store: plan (precision fp64, tuner_version 3) does not match its key " +
                to_string(key));
  EXPECT_EQ(store.find(key), std::nullopt);
}

TEST(SqlitePlanStore, CorruptPlanJsonRowIsDroppedAndNotFound) {
  test::TempDir dir;
  const std::string path = dir.file("plans.db");
  const PlanKey key = key_of(1);
  SqlitePlanStore store({.path = path});
  store.put(key, plan_for(key));
  store.put(key_of(2), plan_for(key_of(2)));
  {
    test::RawDb raw(path);
    raw.exec(
        "UPDATE plans SET plan_json = '{\"format\": 40001, \"launch\": {' WHERE fingerprint = '" +
        key.fingerprint.hex() + "'");
  }
  EXPECT_EQ(store.find(key), std::nullopt);
  test::RawDb raw(path);
  EXPECT_EQ(
      raw.query("SELECT COUNT(*) FROM plans WHERE fingerprint = '" + key.fingerprint.hex() + "'"),
      "0");
  EXPECT_EQ(store.find(key_of(2)), plan_for(key_of(2)));  // the neighbour is untouched
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

TEST(SqlitePlanStore, RowWhosePlanDisagreesWithItsColumnsIsDropped) {
  test::TempDir dir;
  const std::string path = dir.file("plans.db");
  SqlitePlanStore store({.path = path});
  for (std::uint64_t i = 0; i < 3; ++i) store.put(key_of(i), plan_for(key_of(i)));
  test::RawDb raw(path);
  const auto where = [](std::uint64_t i) {
    return " WHERE fingerprint = '" + key_of(i).fingerprint.hex() + "'";
  };
  raw.exec("UPDATE plans SET format_id = 3" + where(0));
  raw.exec("UPDATE plans SET plan_json = json_set(plan_json, '$.precision', 'fp64')" + where(1));
  raw.exec("UPDATE plans SET plan_json = json_set(plan_json, '$.tuner_version', 9)" + where(2));
  for (std::uint64_t i = 0; i < 3; ++i) EXPECT_EQ(store.find(key_of(i)), std::nullopt) << i;
  EXPECT_EQ(raw.query("SELECT COUNT(*) FROM plans"), "0");
}

TEST(SqlitePlanStore, ListDropsCorruptRowsAndReturnsTheRest) {
  test::TempDir dir;
  const std::string path = dir.file("plans.db");
  SqlitePlanStore store({.path = path});
  for (std::uint64_t i = 0; i < 3; ++i) store.put(key_of(i), plan_for(key_of(i)));
  test::RawDb raw(path);
  raw.exec("UPDATE plans SET plan_json = 'not json' WHERE fingerprint = '" +
           key_of(1).fingerprint.hex() + "'");
  raw.exec("UPDATE plans SET fingerprint = 'XYZ' WHERE fingerprint = '" +
           key_of(2).fingerprint.hex() + "'");
  const std::vector<StoredPlan> listed = store.list(10);
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0].key, key_of(0));
  EXPECT_EQ(raw.query("SELECT COUNT(*) FROM plans"), "1");
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

TEST(SqlitePlanStore, CalibrationsAndPlansAreIndependent) {
  SqlitePlanStore store({.path = ":memory:"});
  store.put_calibration("gpu|test|cc9.0", 3, "{}");
  store.put(key_of(1), plan_for(key_of(1)));
  EXPECT_EQ(store.erase_all_for_device("gpu|test|cc9.0"), 1u);
  EXPECT_EQ(store.find_calibration("gpu|test|cc9.0", 3), "{}");
}

}  // namespace
}  // namespace spmvd
