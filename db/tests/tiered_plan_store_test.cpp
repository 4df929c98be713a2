// The two tiers: a real SQLite file in front of a cluster store. The cluster here is a real
// SqlitePlanStore behind a switch that makes it fail as an unreachable server does
// (Error(unavailable) on connect and on every operation), so outages can be started and ended
// at exact points; the integration test stops a real PostgreSQL under two daemons.

#include "db/tiered_plan_store.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "core/error.hpp"
#include "db/open_plan_store.hpp"
#include "db/sqlite_plan_store.hpp"
#include "db/tests/test_plans.hpp"
#include "db/tests/test_sqlite.hpp"

namespace spmvd {
namespace {

using test::key_of;
using test::plan_for;

// A real store that answers only while `up` is set.
class SwitchableStore final : public PlanStore {
 public:
  SwitchableStore(std::shared_ptr<PlanStore> inner, std::shared_ptr<std::atomic<bool>> up,
                  std::atomic<int>& plan_lookups)
      : plan_lookups(plan_lookups), inner_(std::move(inner)), up_(std::move(up)) {}

  std::atomic<int>& plan_lookups;  // find calls that reached this store, answered or not

  std::optional<Plan> find(const PlanKey& key) override {
    ++plan_lookups;
    return check(), inner_->find(key);
  }
  void put(const PlanKey& key, const Plan& plan) override { check(), inner_->put(key, plan); }
  bool erase(const PlanKey& key) override { return check(), inner_->erase(key); }
  std::vector<StoredPlan> list(std::size_t limit) override { return check(), inner_->list(limit); }
  std::size_t erase_all_for_device(const std::string& device) override {
    return check(), inner_->erase_all_for_device(device);
  }
  void put_calibration(const std::string& device, std::uint32_t version,
                       const std::string& json) override {
    check(), inner_->put_calibration(device, version, json);
  }
  std::optional<std::string> find_calibration(const std::string& device,
                                              std::uint32_t version) override {
    return check(), inner_->find_calibration(device, version);
  }
  std::vector<StoredCalibration> list_calibrations() override {
    return check(), inner_->list_calibrations();
  }
  void put_samples(const std::vector<MeasurementSample>& samples, std::size_t keep) override {
    check(), inner_->put_samples(samples, keep);
  }
  std::vector<MeasurementSample> list_samples(const std::string& device,
                                              Precision precision) override {
    return check(), inner_->list_samples(device, precision);
  }

 private:
  void check() const {
    if (!*up_) throw Error(ErrorCode::unavailable, "cluster store: connection refused (test)");
  }
  std::shared_ptr<PlanStore> inner_;
  std::shared_ptr<std::atomic<bool>> up_;
};

class TieredPlanStoreTest : public ::testing::Test {
 protected:
  // The tiers on fresh files; retries are left to the test (sync_with_cluster) unless
  // retry_initial_ms is short.
  std::unique_ptr<TieredPlanStore> open_tiered(std::uint32_t retry_initial_ms = 600'000) {
    auto local = std::make_unique<SqlitePlanStore>(SqlitePlanStoreOptions{.path = local_path_});
    auto outbox = std::make_unique<SqliteOutbox>(local_path_);
    TieredPlanStoreOptions options;
    options.cluster_name = "test-cluster";
    options.retry_initial_ms = retry_initial_ms;
    options.retry_max_ms = std::max<std::uint32_t>(retry_initial_ms, 1000);
    return std::make_unique<TieredPlanStore>(
        std::move(local), std::move(outbox),
        [this]() -> std::unique_ptr<PlanStore> {
          if (!*up_) throw Error(ErrorCode::unavailable, "cannot connect (test)");
          return std::make_unique<SwitchableStore>(cluster_, up_, cluster_plan_lookups_);
        },
        options);
  }
  // Another connection to the local file, behind the tiered store's back.
  SqlitePlanStore local_view() { return SqlitePlanStore({.path = local_path_}); }

  test::TempDir dir_;
  std::string local_path_ = dir_.file("local.db");
  std::shared_ptr<PlanStore> cluster_ =
      std::make_shared<SqlitePlanStore>(SqlitePlanStoreOptions{.path = dir_.file("cluster.db")});
  std::shared_ptr<std::atomic<bool>> up_ = std::make_shared<std::atomic<bool>>(true);
  std::atomic<int> cluster_plan_lookups_{0};
};

TEST_F(TieredPlanStoreTest, PutWritesBothTiersAndALocalHitCountsAsSuch) {
  auto store = open_tiered();
  const PlanKey key = key_of(1);
  store->put(key, plan_for(key));
  EXPECT_EQ(local_view().find(key), plan_for(key));
  EXPECT_EQ(cluster_->find(key), plan_for(key));

  EXPECT_EQ(store->find(key), plan_for(key));
  EXPECT_EQ(store->stats().local_hits, 1u);
  EXPECT_EQ(store->stats().local_misses, 0u);
  EXPECT_EQ(store->stats().cluster_hits + store->stats().cluster_misses, 0u);
}

TEST_F(TieredPlanStoreTest, AClusterHitIsCopiedToTheLocalTier) {
  auto store = open_tiered();
  const PlanKey key = key_of(2);
  cluster_->put(key, plan_for(key));  // tuned by another daemon
  EXPECT_EQ(store->find(key), plan_for(key));
  EXPECT_EQ(store->stats().local_misses, 1u);
  EXPECT_EQ(store->stats().cluster_hits, 1u);
  EXPECT_EQ(local_view().find(key), plan_for(key));

  EXPECT_EQ(store->find(key), plan_for(key));
  EXPECT_EQ(store->stats().local_hits, 1u);
  EXPECT_EQ(store->find(key_of(3)), std::nullopt);
  EXPECT_EQ(store->stats().cluster_misses, 1u);
}

TEST_F(TieredPlanStoreTest, DuringAnOutageTheLocalTierServesAndWritesAreDeliveredAfterIt) {
  auto store = open_tiered();
  EXPECT_TRUE(store->stats().cluster_available);
  *up_ = false;

  for (std::uint64_t i = 0; i < 3; ++i) store->put(key_of(i), plan_for(key_of(i)));
  store->put_calibration("gpu|test|cc9.0", 12, R"({"fits": 1})");
  EXPECT_EQ(store->find(key_of(1)), plan_for(key_of(1)));
  EXPECT_FALSE(store->stats().cluster_available);
  EXPECT_EQ(store->stats().cluster_unavailable, 1u) << "one outage, however many failures";
  EXPECT_GE(store->stats().cluster_errors, 1u);
  EXPECT_EQ(store->stats().outbox_size, 4u);
  EXPECT_EQ(cluster_->find(key_of(0)), std::nullopt) << "nothing reached the cluster yet";

  *up_ = true;
  EXPECT_TRUE(store->sync_with_cluster());
  for (std::uint64_t i = 0; i < 3; ++i) EXPECT_EQ(cluster_->find(key_of(i)), plan_for(key_of(i)));
  EXPECT_EQ(cluster_->find_calibration("gpu|test|cc9.0", 12), R"({"fits": 1})");
  EXPECT_TRUE(store->stats().cluster_available);
  EXPECT_EQ(store->stats().outbox_size, 0u);
  EXPECT_EQ(store->stats().outbox_replayed, 4u);
  EXPECT_EQ(store->stats().cluster_unavailable, 1u);
}

MeasurementSample sample_of(std::uint32_t seed) {
  MeasurementSample sample;
  sample.device_signature = "gpu|test|cc9.0";
  sample.fingerprint = key_of(seed).fingerprint.hex();
  sample.tuned_ms = seed;
  sample.measured = test::full_plan(seed);
  return sample;
}

TEST_F(TieredPlanStoreTest, SamplesGoToBothTiersAndDuringAnOutageToTheLocalOneOnly) {
  auto store = open_tiered();
  store->put_samples({sample_of(1)}, 100);
  EXPECT_EQ(local_view().list_samples("gpu|test|cc9.0", Precision::fp32).size(), 1u);
  EXPECT_EQ(cluster_->list_samples("gpu|test|cc9.0", Precision::fp32).size(), 1u);

  *up_ = false;
  store->put_samples({sample_of(2)}, 100);
  EXPECT_EQ(store->stats().outbox_size, 0u) << "samples are not queued";
  // The cluster is skipped during the outage: the local tier's two samples are listed.
  EXPECT_EQ(store->list_samples("gpu|test|cc9.0", Precision::fp32).size(), 2u);

  *up_ = true;
  EXPECT_TRUE(store->sync_with_cluster());
  EXPECT_EQ(cluster_->list_samples("gpu|test|cc9.0", Precision::fp32).size(), 1u)
      << "the sample written during the outage stays local";
  EXPECT_EQ(store->list_samples("gpu|test|cc9.0", Precision::fp32).size(), 1u)
      << "with the cluster back, its samples (every daemon's) are the ones listed";
}

TEST_F(TieredPlanStoreTest, TheRetryThreadDeliversWithoutBeingAsked) {
  auto store = open_tiered(/*retry_initial_ms=*/20);
  *up_ = false;
  store->put(key_of(1), plan_for(key_of(1)));
  EXPECT_EQ(store->stats().outbox_size, 1u);
  *up_ = true;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (store->stats().outbox_size > 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(store->stats().outbox_size, 0u);
  EXPECT_EQ(cluster_->find(key_of(1)), plan_for(key_of(1)));
  EXPECT_TRUE(store->stats().cluster_available);
}

TEST_F(TieredPlanStoreTest, QueuedWritesSurviveARestartAndAreDeliveredByTheNextRun) {
  *up_ = false;
  {
    auto store = open_tiered();
    store->put(key_of(1), plan_for(key_of(1)));
    EXPECT_EQ(store->stats().outbox_size, 1u);
  }  // the daemon stops with the cluster still down
  *up_ = true;
  auto store = open_tiered();  // the constructor's first attempt delivers
  EXPECT_EQ(cluster_->find(key_of(1)), plan_for(key_of(1)));
  EXPECT_EQ(store->stats().outbox_size, 0u);
  EXPECT_EQ(store->stats().outbox_replayed, 1u);
}

TEST_F(TieredPlanStoreTest, AClusterUnreachableAtStartIsConnectedLater) {
  *up_ = false;
  auto store = open_tiered();
  EXPECT_FALSE(store->stats().cluster_available);
  EXPECT_EQ(store->stats().cluster_unavailable, 1u);
  store->put(key_of(1), plan_for(key_of(1)));
  EXPECT_EQ(store->find(key_of(1)), plan_for(key_of(1)));

  *up_ = true;
  EXPECT_TRUE(store->sync_with_cluster());
  EXPECT_EQ(cluster_->find(key_of(1)), plan_for(key_of(1)));
  cluster_->put(key_of(2), plan_for(key_of(2)));
  EXPECT_EQ(store->find(key_of(2)), plan_for(key_of(2)));
  EXPECT_EQ(store->stats().cluster_hits, 1u);
}

TEST_F(TieredPlanStoreTest, APlanErasedDuringAnOutageIsNotDelivered) {
  auto store = open_tiered();
  *up_ = false;
  store->put(key_of(1), plan_for(key_of(1)));
  store->put(key_of(2), plan_for(key_of(2)));
  EXPECT_TRUE(store->erase(key_of(1)));
  EXPECT_EQ(store->stats().outbox_size, 1u);
  *up_ = true;
  EXPECT_TRUE(store->sync_with_cluster());
  EXPECT_EQ(cluster_->find(key_of(1)), std::nullopt);
  EXPECT_EQ(cluster_->find(key_of(2)), plan_for(key_of(2)));
}

TEST_F(TieredPlanStoreTest, ReplayDeliversWhatTheLocalTierHoldsAtThatTime) {
  auto store = open_tiered();
  *up_ = false;
  const PlanKey key = key_of(1);
  store->put(key, plan_for(key, 3));
  store->put(key, plan_for(key, 1));  // faster: replaces the local row; one outbox entry
  EXPECT_EQ(store->stats().outbox_size, 1u);
  *up_ = true;
  EXPECT_TRUE(store->sync_with_cluster());
  EXPECT_EQ(cluster_->find(key), plan_for(key, 1));
}

TEST_F(TieredPlanStoreTest, ACalibrationMissingLocallyIsReadFromTheClusterAndCopied) {
  auto store = open_tiered();
  cluster_->put_calibration("gpu|h100", 12, R"({"a": 1})");
  EXPECT_EQ(store->find_calibration("gpu|h100", 12), R"({"a": 1})");
  EXPECT_EQ(local_view().find_calibration("gpu|h100", 12), R"({"a": 1})");
  EXPECT_EQ(store->find_calibration("gpu|h100", 11), std::nullopt);
}

TEST_F(TieredPlanStoreTest, ListShowsEachKeyOfBothTiersOnce) {
  auto store = open_tiered();
  store->put(key_of(1), plan_for(key_of(1)));  // both tiers
  cluster_->put(key_of(2), plan_for(key_of(2)));
  local_view().put(key_of(3), plan_for(key_of(3)));
  std::vector<std::uint64_t> lows;
  for (const StoredPlan& stored : store->list(10)) lows.push_back(stored.key.fingerprint.low);
  std::sort(lows.begin(), lows.end());
  EXPECT_EQ(lows, (std::vector<std::uint64_t>{1, 2, 3}));
  EXPECT_EQ(store->list(2).size(), 2u);
}

TEST_F(TieredPlanStoreTest, AnOutageSkipsTheClusterForReadsInsteadOfFailingThem) {
  auto store = open_tiered();
  cluster_->put(key_of(5), plan_for(key_of(5)));
  *up_ = false;
  EXPECT_EQ(store->find(key_of(5)), std::nullopt);  // a miss, served
  EXPECT_EQ(cluster_plan_lookups_, 1);
  EXPECT_EQ(store->find(key_of(5)), std::nullopt);
  EXPECT_EQ(cluster_plan_lookups_, 1) << "the second lookup did not try the cluster";
  EXPECT_EQ(store->stats().local_misses, 2u);
  EXPECT_EQ(store->list(10).size(), 0u);
}

TEST(TieredPlanStoreLocalOnly, CountsLocalHitsAndMissesAndHasNoCluster) {
  TieredPlanStore store(std::make_unique<SqlitePlanStore>(SqlitePlanStoreOptions{.path = ":memory:"}));
  store.put(key_of(1), plan_for(key_of(1)));
  EXPECT_EQ(store.find(key_of(1)), plan_for(key_of(1)));
  EXPECT_EQ(store.find(key_of(2)), std::nullopt);
  EXPECT_EQ(store.stats().local_hits, 1u);
  EXPECT_EQ(store.stats().local_misses, 1u);
  EXPECT_FALSE(store.stats().cluster_configured);
  EXPECT_FALSE(store.sync_with_cluster());
}

TEST(OpenPlanStore, UrlsNameTheBackend) {
  using K = PlanStoreKind;
  EXPECT_EQ(parse_plan_store_url("sqlite:///var/lib/spmvd/plans.db"),
            (PlanStoreLocation{K::sqlite, "/var/lib/spmvd/plans.db"}));
  EXPECT_EQ(parse_plan_store_url("sqlite://plans.db"), (PlanStoreLocation{K::sqlite, "plans.db"}));
  EXPECT_EQ(parse_plan_store_url("spmvd.db"), (PlanStoreLocation{K::sqlite, "spmvd.db"}));
  EXPECT_EQ(parse_plan_store_url("/srv/a b/plans.db"),
            (PlanStoreLocation{K::sqlite, "/srv/a b/plans.db"}));
  EXPECT_EQ(parse_plan_store_url("postgresql://db.example/spmvd"),
            (PlanStoreLocation{K::postgresql, "postgresql://db.example/spmvd"}));
  EXPECT_EQ(parse_plan_store_url("postgres://u@h:5433/d?sslmode=require"),
            (PlanStoreLocation{K::postgresql, "postgres://u@h:5433/d?sslmode=require"}));
}

TEST(OpenPlanStore, BadUrlsAreRefusedWithTheReason) {
  const auto message = [](const std::string& url) {
    try {
      parse_plan_store_url(url);
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_EQ(message(""), "plan store URL is empty");
  EXPECT_EQ(message("sqlite://"), "plan store URL 'sqlite://' names no file: use sqlite:///absolute/path.db");
  EXPECT_EQ(message("mysql://u:secret@h/d"),
            "plan store URL 'mysql://u:***@h/d' has unknown scheme 'mysql': use "
            "sqlite:///path/plans.db, a file path, or postgresql://host/dbname");
}

TEST(OpenPlanStore, AClusterNeedsALocalSqliteFile) {
  try {
    open_tiered_plan_store("postgresql://h/local", "postgresql://h/cluster");
    FAIL() << "a PostgreSQL local tier was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    EXPECT_EQ(std::string(e.what()),
              "with a cluster store (postgresql://h/cluster) the local plan store must be a "
              "SQLite file, which also keeps the writes the cluster missed; got "
              "'postgresql://h/local'");
  }
}

TEST(OpenPlanStore, PasswordsAreRedactedForLogs) {
  EXPECT_EQ(displayed_plan_store_url("postgresql://spmvd:s3cr%40t@db:5432/plans"),
            "postgresql://spmvd:***@db:5432/plans");
  EXPECT_EQ(displayed_plan_store_url("postgresql://db/plans?user=a&password=xyz&sslmode=verify-full"),
            "postgresql://db/plans?user=a&password=***&sslmode=verify-full");
  EXPECT_EQ(displayed_plan_store_url("postgresql://spmvd@db/plans"), "postgresql://spmvd@db/plans");
}

}  // namespace
}  // namespace spmvd
