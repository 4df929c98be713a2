// What every PlanStore backend promises (db/plan_store.hpp), checked against real SQLite, a
// real PostgreSQL server, and the daemon's two tiers (TieredPlanStore) composed of them. The PostgreSQL instantiation needs SPMVD_TEST_POSTGRES_URL
// (deploy/run-tests.sh sets it) and skips, saying so, without it.

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <ostream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "core/error.hpp"
#include "db/tests/store_backends.hpp"
#include "db/tests/test_plans.hpp"

namespace spmvd {
namespace {

using test::key_of;
using test::plan_for;

struct BackendParam {
  const char* name;
  std::function<std::unique_ptr<test::StoreBackend>()> make;
};

// So that a failure names the backend rather than dumping the struct's bytes.
void PrintTo(const BackendParam& param, std::ostream* out) { *out << param.name; }

class PlanStoreConformance : public ::testing::TestWithParam<BackendParam> {
 protected:
  void SetUp() override {
    backend_ = GetParam().make();
    if (!backend_) {
      GTEST_SKIP() << GetParam().name << " backend not configured: set "
                   << test::kPostgresUrlVariable
                   << " to a PostgreSQL URL whose server lets this user create schemas "
                      "(deploy/run-tests.sh starts one)";
    }
    store_ = backend_->open();
  }

  // The row count of the plans table, read behind the store's back.
  std::string rows() { return backend_->query("SELECT COUNT(*) FROM plans"); }
  std::string where(const PlanKey& key) {
    return " WHERE fingerprint = '" + key.fingerprint.hex() + "'";
  }

  std::unique_ptr<test::StoreBackend> backend_;
  std::unique_ptr<PlanStore> store_;
};

// The winner of plan_store.hpp's rule, computed from the rule's definition.
Plan winner_of(const std::vector<Plan>& plans) {
  return *std::min_element(plans.begin(), plans.end(), [](const Plan& a, const Plan& b) {
    if (a.measured_ms != b.measured_ms) return a.measured_ms < b.measured_ms;
    return plan_to_json(a) < plan_to_json(b);
  });
}

TEST_P(PlanStoreConformance, FindsWhatItPut) {
  const PlanKey key = key_of(1);
  store_->put(key, plan_for(key));
  EXPECT_EQ(store_->find(key), plan_for(key));
}

TEST_P(PlanStoreConformance, TheTuningModeAndCostAreQueryableColumns) {
  const PlanKey key = key_of(1);
  Plan plan = plan_for(key);
  plan.measured_ms = 0.5;
  plan.tuning.cost.total_ms = 12.0;  // 24 multiplies of the plan
  store_->put(key, plan);
  EXPECT_EQ(backend_->query("SELECT tune_mode FROM plans" + where(key)), "verify-top-k");
  EXPECT_EQ(std::stod(backend_->query("SELECT tuning_ms FROM plans" + where(key))), 12.0);
  EXPECT_EQ(std::stod(backend_->query("SELECT tuning_spmv_equivalents FROM plans" + where(key))),
            24.0);
  EXPECT_EQ(store_->find(key)->tuning, plan.tuning);
}

TEST_P(PlanStoreConformance, FindOfAnAbsentKeyIsNullopt) {
  store_->put(key_of(1), plan_for(key_of(1)));
  EXPECT_EQ(store_->find(key_of(2)), std::nullopt);
}

TEST_P(PlanStoreConformance, AnotherStoreOnTheSameDatabaseFindsThePlan) {
  const PlanKey key = key_of(7, "gpu|NVIDIA H100 80GB HBM3|cc9.0|sm132|driver580|cuda13000");
  store_->put(key, plan_for(key, 5));
  store_.reset();
  const auto other = backend_->open();
  EXPECT_EQ(other->find(key), plan_for(key, 5));
  const std::vector<StoredPlan> listed = other->list(10);
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0].key, key);
  EXPECT_EQ(listed[0].plan, plan_for(key, 5));
}

TEST_P(PlanStoreConformance, KeysDifferingInOneComponentAreDistinct) {
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
      key_of(1, base.device_signature, base.precision, base.tuner_version, base.model_version + 1),
  };
  for (std::uint32_t i = 0; i < keys.size(); ++i) store_->put(keys[i], plan_for(keys[i], i + 1));
  for (std::uint32_t i = 0; i < keys.size(); ++i) {
    EXPECT_EQ(store_->find(keys[i]), plan_for(keys[i], i + 1)) << to_string(keys[i]);
  }
  EXPECT_EQ(store_->list(100).size(), keys.size());
}

TEST_P(PlanStoreConformance, AFasterPlanReplacesTheStoredOneAndKeepsItsCreationTime) {
  const PlanKey key = key_of(1);
  store_->put(key, plan_for(key, 2));  // measured_ms = 1/3 + seed
  const std::vector<StoredPlan> first = store_->list(10);
  ASSERT_EQ(first.size(), 1u);

  store_->put(key, plan_for(key, 1));
  EXPECT_EQ(store_->find(key), plan_for(key, 1));
  const std::vector<StoredPlan> second = store_->list(10);
  ASSERT_EQ(second.size(), 1u);
  EXPECT_EQ(second[0].created_ms, first[0].created_ms);
  EXPECT_GE(second[0].updated_ms, first[0].updated_ms);
  EXPECT_GT(second[0].created_ms, 1'600'000'000'000);  // unix milliseconds, after 2020
}

TEST_P(PlanStoreConformance, ASlowerPlanChangesNothing) {
  const PlanKey key = key_of(1);
  store_->put(key, plan_for(key, 1));
  store_->put(key, plan_for(key, 2));
  EXPECT_EQ(store_->find(key), plan_for(key, 1));
  EXPECT_EQ(rows(), "1");
}

TEST_P(PlanStoreConformance, EqualTimesAreDecidedByThePlanTextInEitherOrder) {
  const PlanKey a_first = key_of(1);
  const PlanKey b_first = key_of(2);
  Plan a = plan_for(a_first, 1);
  Plan b = plan_for(a_first, 2);
  b.measured_ms = a.measured_ms;
  ASSERT_NE(plan_to_json(a), plan_to_json(b));
  const Plan expected = winner_of({a, b});

  store_->put(a_first, a);
  store_->put(a_first, b);
  store_->put(b_first, b);
  store_->put(b_first, a);
  EXPECT_EQ(store_->find(a_first), expected);
  EXPECT_EQ(store_->find(b_first), expected);
}

TEST_P(PlanStoreConformance, EraseRemovesOnlyThatKey) {
  store_->put(key_of(1), plan_for(key_of(1)));
  store_->put(key_of(2), plan_for(key_of(2)));
  EXPECT_TRUE(store_->erase(key_of(1)));
  EXPECT_FALSE(store_->erase(key_of(1)));
  EXPECT_EQ(store_->find(key_of(1)), std::nullopt);
  EXPECT_EQ(store_->find(key_of(2)), plan_for(key_of(2)));
}

TEST_P(PlanStoreConformance, AfterAnEraseASlowerPlanIsStored) {
  const PlanKey key = key_of(1);
  store_->put(key, plan_for(key, 1));
  store_->erase(key);
  store_->put(key, plan_for(key, 2));
  EXPECT_EQ(store_->find(key), plan_for(key, 2));
}

TEST_P(PlanStoreConformance, EraseAllForDeviceCountsAndKeepsOtherDevices) {
  for (std::uint64_t i = 0; i < 3; ++i) store_->put(key_of(i, "gpu|a"), plan_for(key_of(i, "gpu|a")));
  store_->put(key_of(0, "gpu|b"), plan_for(key_of(0, "gpu|b")));
  EXPECT_EQ(store_->erase_all_for_device("gpu|a"), 3u);
  EXPECT_EQ(store_->erase_all_for_device("gpu|a"), 0u);
  EXPECT_EQ(store_->find(key_of(1, "gpu|a")), std::nullopt);
  EXPECT_EQ(store_->find(key_of(0, "gpu|b")), plan_for(key_of(0, "gpu|b")));
}

// A plan carrying the partition its format computed (core/plan_partition.hpp): entries that
// use every byte of an int32, the sign bit included.
Plan with_partition(Plan plan, std::string kind = "metis_kway/3") {
  plan.partition = std::make_shared<const PlanPartition>(
      PlanPartition{std::move(kind),
                    {0, 2, 1, -1, 0x7fffffff, static_cast<std::int32_t>(0x80000000u), 0x12345678}});
  return plan;
}

TEST_P(PlanStoreConformance, APlansPartitionIsStoredBesideItAndFoundWithIt) {
  const PlanKey key = key_of(1);
  const Plan plan = with_partition(plan_for(key));
  store_->put(key, plan);
  const std::optional<Plan> found = store_->find(key);
  ASSERT_TRUE(found.has_value());
  ASSERT_TRUE(found->partition);
  EXPECT_EQ(*found->partition, *plan.partition);
  EXPECT_EQ(found, plan);
  EXPECT_EQ(backend_->query("SELECT kind FROM plan_partitions" + where(key)), "metis_kway/3");
  EXPECT_EQ(backend_->query("SELECT entry_count FROM plan_partitions" + where(key)), "7");
  EXPECT_EQ(backend_->query("SELECT LENGTH(entries) FROM plan_partitions" + where(key)), "28");
  // Not in the plan's JSON: a plan without one finds none.
  store_->put(key_of(2), plan_for(key_of(2)));
  EXPECT_FALSE(store_->find(key_of(2))->partition);
}

TEST_P(PlanStoreConformance, ErasingAPlanErasesItsPartition) {
  store_->put(key_of(1), with_partition(plan_for(key_of(1))));
  store_->put(key_of(2), with_partition(plan_for(key_of(2))));
  ASSERT_EQ(backend_->query("SELECT COUNT(*) FROM plan_partitions"), "2");
  EXPECT_TRUE(store_->erase(key_of(1)));
  EXPECT_EQ(backend_->query("SELECT COUNT(*) FROM plan_partitions"), "1");
  EXPECT_EQ(store_->erase_all_for_device(key_of(2).device_signature), 1u);
  EXPECT_EQ(backend_->query("SELECT COUNT(*) FROM plan_partitions"), "0");
  // Stored again without one, the plan finds no partition of its predecessor.
  store_->put(key_of(1), plan_for(key_of(1)));
  EXPECT_FALSE(store_->find(key_of(1))->partition);
}

TEST_P(PlanStoreConformance, AFasterPlanReplacesThePartitionOfThePlanItReplaces) {
  const PlanKey key = key_of(1);
  store_->put(key, with_partition(plan_for(key, 2), "rcm"));
  store_->put(key, plan_for(key, 1));  // faster, and computes no partition
  EXPECT_EQ(store_->find(key), plan_for(key, 1));
  EXPECT_EQ(backend_->query("SELECT COUNT(*) FROM plan_partitions"), "0");
  store_->put(key, with_partition(plan_for(key, 0)));  // faster again, with its own
  EXPECT_EQ(store_->find(key), with_partition(plan_for(key, 0)));
}

TEST_P(PlanStoreConformance, ASlowerPlansPartitionIsNotStored) {
  const PlanKey key = key_of(1);
  store_->put(key, plan_for(key, 1));
  store_->put(key, with_partition(plan_for(key, 2)));  // loses
  EXPECT_EQ(backend_->query("SELECT COUNT(*) FROM plan_partitions"), "0");
  EXPECT_FALSE(store_->find(key)->partition);
  // The same plan put again with its partition (a put that neither wins nor loses) adds it.
  store_->put(key, with_partition(plan_for(key, 1)));
  EXPECT_EQ(store_->find(key), with_partition(plan_for(key, 1)));
}

TEST_P(PlanStoreConformance, APlanWhosePartitionDoesNotDecodeIsDropped) {
  const PlanKey key = key_of(1);
  store_->put(key, with_partition(plan_for(key)));
  backend_->exec("UPDATE plan_partitions SET entry_count = 8");  // 28 bytes are 7 entries
  EXPECT_EQ(store_->find(key), std::nullopt);
  EXPECT_EQ(rows(), "0");
  EXPECT_EQ(backend_->query("SELECT COUNT(*) FROM plan_partitions"), "0");
}

TEST_P(PlanStoreConformance, ListReturnsAtMostLimitPlansNewestFirst) {
  for (std::uint64_t i = 0; i < 5; ++i) store_->put(key_of(i), plan_for(key_of(i)));
  EXPECT_EQ(store_->list(3).size(), 3u);
  EXPECT_EQ(store_->list(0).size(), 0u);
  const std::vector<StoredPlan> all = store_->list(100);
  ASSERT_EQ(all.size(), 5u);
  std::vector<std::uint64_t> lows;
  for (const StoredPlan& stored : all) lows.push_back(stored.key.fingerprint.low);
  std::sort(lows.begin(), lows.end());
  EXPECT_EQ(lows, (std::vector<std::uint64_t>{0, 1, 2, 3, 4}));
  EXPECT_TRUE(std::is_sorted(all.begin(), all.end(), [](const StoredPlan& a, const StoredPlan& b) {
    return a.updated_ms > b.updated_ms;
  }));
}

TEST_P(PlanStoreConformance, PutRefusesAPlanThatDisagreesWithItsKey) {
  const PlanKey key = key_of(1);
  Plan plan = plan_for(key);
  plan.precision = Precision::fp64;
  try {
    store_->put(key, plan);
    FAIL() << "put accepted a plan whose precision disagrees with its key";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    EXPECT_EQ(std::string(e.what()),
              "plan store: plan (precision fp64, tuner_version 3) does not match its key " +
                  to_string(key));
  }
  EXPECT_EQ(store_->find(key), std::nullopt);
}

TEST_P(PlanStoreConformance, UndecodablePlanJsonIsDroppedAndNotFound) {
  const PlanKey key = key_of(1);
  store_->put(key, plan_for(key));
  store_->put(key_of(2), plan_for(key_of(2)));
  backend_->exec("UPDATE plans SET plan_json = '{\"format\": 40001, \"launch\": {'" + where(key));
  EXPECT_EQ(store_->find(key), std::nullopt);
  EXPECT_EQ(backend_->query("SELECT COUNT(*) FROM plans" + where(key)), "0");
  EXPECT_EQ(store_->find(key_of(2)), plan_for(key_of(2)));  // the neighbour is untouched
}

TEST_P(PlanStoreConformance, RowsWhosePlanDisagreesWithTheirColumnsAreDropped) {
  for (std::uint64_t i = 0; i < 3; ++i) store_->put(key_of(i), plan_for(key_of(i)));
  backend_->exec("UPDATE plans SET format_id = 3" + where(key_of(0)));
  backend_->exec("UPDATE plans SET plan_json = REPLACE(plan_json, '\"fp32\"', '\"fp64\"')" +
                 where(key_of(1)));
  backend_->exec("UPDATE plans SET plan_json = REPLACE(plan_json, '\"tuner_version\":3',"
                 " '\"tuner_version\":9')" + where(key_of(2)));
  for (std::uint64_t i = 0; i < 3; ++i) EXPECT_EQ(store_->find(key_of(i)), std::nullopt) << i;
  EXPECT_EQ(rows(), "0");
}

TEST_P(PlanStoreConformance, ListDropsUndecodableRowsAndReturnsTheRest) {
  for (std::uint64_t i = 0; i < 3; ++i) store_->put(key_of(i), plan_for(key_of(i)));
  backend_->exec("UPDATE plans SET plan_json = 'not json'" + where(key_of(1)));
  backend_->exec("UPDATE plans SET fingerprint = 'XYZ'" + where(key_of(2)));
  const std::vector<StoredPlan> listed = store_->list(10);
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0].key, key_of(0));
  EXPECT_EQ(rows(), "1");
}

TEST_P(PlanStoreConformance, CalibrationsRoundTripAndListInOrder) {
  EXPECT_EQ(store_->find_calibration("gpu|a", 1), std::nullopt);
  store_->put_calibration("gpu|b", 1, R"({"ell": [1.5, 2.5]})");
  store_->put_calibration("gpu|a", 2, R"({"csr": 0.25})");
  store_->put_calibration("gpu|a", 1, R"({"csr": 0.5})");
  store_->put_calibration("gpu|a", 1, R"({"csr": 0.75})");  // replaces
  const auto other = backend_->open();
  EXPECT_EQ(other->find_calibration("gpu|a", 1), R"({"csr": 0.75})");
  EXPECT_EQ(other->find_calibration("gpu|a", 2), R"({"csr": 0.25})");
  EXPECT_EQ(other->find_calibration("gpu|b", 1), R"({"ell": [1.5, 2.5]})");
  EXPECT_EQ(other->find_calibration("gpu|b", 2), std::nullopt);

  const std::vector<StoredCalibration> listed = other->list_calibrations();
  ASSERT_EQ(listed.size(), 3u);
  EXPECT_EQ(listed[0].device_signature, "gpu|a");
  EXPECT_EQ(listed[0].model_version, 1u);
  EXPECT_EQ(listed[0].model_json, R"({"csr": 0.75})");
  EXPECT_GT(listed[0].created_ms, 1'600'000'000'000);
  EXPECT_EQ(listed[1].device_signature, "gpu|a");
  EXPECT_EQ(listed[1].model_version, 2u);
  EXPECT_EQ(listed[2].device_signature, "gpu|b");
}

TEST_P(PlanStoreConformance, CalibrationsAndPlansAreIndependent) {
  store_->put_calibration("gpu|test|cc9.0", 3, "{}");
  store_->put(key_of(1), plan_for(key_of(1)));
  EXPECT_EQ(store_->erase_all_for_device("gpu|test|cc9.0"), 1u);
  EXPECT_EQ(store_->find_calibration("gpu|test|cc9.0", 3), "{}");
}

// Several daemons (a store each) racing on the same keys, each writing its candidates in its
// own order: one whole row per key, the rule's winner, whatever the interleaving.
TEST_P(PlanStoreConformance, ConcurrentWritersOfTheSameKeysEndWithTheWinningPlan) {
  constexpr int kWriters = 4;
  constexpr std::uint64_t kKeys = 8;
  constexpr std::uint32_t kSeeds = 6;
  const auto candidates = [](const PlanKey& key) {
    std::vector<Plan> plans;
    for (std::uint32_t seed = 1; seed <= kSeeds; ++seed) {
      Plan plan = plan_for(key, seed);
      if (seed % 2 == 0) plan.measured_ms = plan_for(key, 1).measured_ms;  // ties with seed 1
      plans.push_back(plan);
    }
    return plans;
  };
  const unsigned seed = ::testing::UnitTest::GetInstance()->random_seed();
  std::vector<std::thread> writers;
  std::vector<std::string> failures(kWriters);
  for (int w = 0; w < kWriters; ++w) {
    writers.emplace_back([&, w] {
      try {
        const auto store = backend_->open();
        std::mt19937 rng(seed + static_cast<unsigned>(w));
        for (std::uint64_t k = 0; k < kKeys; ++k) {
          std::vector<Plan> plans = candidates(key_of(k));
          std::shuffle(plans.begin(), plans.end(), rng);
          for (const Plan& plan : plans) store->put(key_of(k), plan);
        }
      } catch (const std::exception& e) {
        failures[static_cast<std::size_t>(w)] = e.what();
      }
    });
  }
  for (std::thread& t : writers) t.join();
  for (int w = 0; w < kWriters; ++w) EXPECT_EQ(failures[static_cast<std::size_t>(w)], "") << w;

  EXPECT_EQ(rows(), std::to_string(kKeys)) << "random seed " << seed;
  for (std::uint64_t k = 0; k < kKeys; ++k) {
    EXPECT_EQ(store_->find(key_of(k)), winner_of(candidates(key_of(k))))
        << to_string(key_of(k)) << ", random seed " << seed;
  }
}

TEST_P(PlanStoreConformance, ThreadsSharingOneStoreKeepEveryPlan) {
  std::vector<std::thread> threads;
  for (std::uint64_t t = 0; t < 4; ++t) {
    threads.emplace_back([this, t] {
      for (std::uint64_t i = 0; i < 25; ++i) {
        const PlanKey key = key_of(t * 1000 + i);
        store_->put(key, plan_for(key));
        (void)store_->find(key);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(store_->list(1000).size(), 100u);
  EXPECT_EQ(rows(), "100");
}

// ---- measured samples ----

MeasurementSample sample_of(std::uint32_t seed, const std::string& device = "gpu|test|cc9.0",
                            Precision precision = Precision::fp32, std::uint16_t format = 7) {
  MeasurementSample sample;
  sample.device_signature = device;
  sample.fingerprint = key_of(seed).fingerprint.hex();
  sample.tuned_ms = 1'700'000'000'000LL + seed;
  sample.model_version = 15;
  sample.measured = test::full_plan(seed);
  sample.measured.format = FormatId{format};
  sample.measured.precision = precision;
  sample.measured.predicted_ms = 0.25 * seed;
  sample.measured.measured_ms = 0.5 + seed;
  return sample;
}

// What the store adds: recorded_ms, which the caller does not know.
MeasurementSample as_listed(MeasurementSample sample, const MeasurementSample& listed) {
  sample.recorded_ms = listed.recorded_ms;
  return sample;
}

TEST_P(PlanStoreConformance, ListsTheSamplesItPutOfOneDeviceAndPrecisionOldestFirst) {
  store_->put_samples({sample_of(1), sample_of(2)}, kDefaultSamplesPerFormat);
  store_->put_samples({sample_of(3), sample_of(4, "gpu|other|cc8.0"),
                       sample_of(5, "gpu|test|cc9.0", Precision::fp64)},
                      kDefaultSamplesPerFormat);
  const std::vector<MeasurementSample> listed =
      store_->list_samples("gpu|test|cc9.0", Precision::fp32);
  ASSERT_EQ(listed.size(), 3u);
  for (std::size_t i = 0; i < listed.size(); ++i) {
    const MeasurementSample expected = sample_of(static_cast<std::uint32_t>(i + 1));
    EXPECT_EQ(listed[i].measured, expected.measured) << "sample " << i;
    EXPECT_EQ(listed[i].fingerprint, expected.fingerprint);
    EXPECT_EQ(listed[i].tuned_ms, expected.tuned_ms);
    EXPECT_EQ(listed[i].model_version, 15u);
    EXPECT_EQ(listed[i].device_signature, "gpu|test|cc9.0");
    EXPECT_GT(listed[i].recorded_ms, 0);
  }
  EXPECT_LE(listed[0].recorded_ms, listed[2].recorded_ms);
  ASSERT_EQ(store_->list_samples("gpu|test|cc9.0", Precision::fp64).size(), 1u);
  EXPECT_EQ(store_->list_samples("gpu|test|cc9.0", Precision::fp64)[0].measured,
            sample_of(5, "gpu|test|cc9.0", Precision::fp64).measured);
  EXPECT_EQ(store_->list_samples("gpu|other|cc8.0", Precision::fp32).size(), 1u);
  EXPECT_TRUE(store_->list_samples("gpu|none", Precision::fp32).empty());
}

TEST_P(PlanStoreConformance, KeepsTheNewestSamplesOfEachFormatUpToTheBound) {
  // Format 7 gets 5 samples over two puts, format 8 two: with a bound of 3, format 7 keeps its
  // 3 newest and format 8 both.
  store_->put_samples({sample_of(1), sample_of(2), sample_of(3)}, 3);
  store_->put_samples({sample_of(4), sample_of(5), sample_of(6, "gpu|test|cc9.0",
                                                              Precision::fp32, 8),
                       sample_of(7, "gpu|test|cc9.0", Precision::fp32, 8)},
                      3);
  std::vector<std::uint32_t> kept_of_7;
  std::size_t kept_of_8 = 0;
  for (const MeasurementSample& s : store_->list_samples("gpu|test|cc9.0", Precision::fp32)) {
    if (s.measured.format == FormatId{7})
      kept_of_7.push_back(static_cast<std::uint32_t>(s.tuned_ms - 1'700'000'000'000LL));
    else
      ++kept_of_8;
  }
  EXPECT_EQ(kept_of_7, (std::vector<std::uint32_t>{3, 4, 5}));
  EXPECT_EQ(kept_of_8, 2u);
  EXPECT_EQ(backend_->query("SELECT COUNT(*) FROM samples"), "5");
}

TEST_P(PlanStoreConformance, RefusesASampleWithoutAMeasuredTime) {
  MeasurementSample bad = sample_of(1);
  bad.measured.measured_ms = 0.0;
  EXPECT_THROW(store_->put_samples({sample_of(2), bad}, 10), Error);
  EXPECT_TRUE(store_->list_samples("gpu|test|cc9.0", Precision::fp32).empty())
      << "a refused batch stores nothing";
}

TEST_P(PlanStoreConformance, DropsASampleWhoseJsonDoesNotDecode) {
  store_->put_samples({sample_of(1), sample_of(2)}, 10);
  backend_->exec("UPDATE samples SET sample_json = '{\"format\": 1}' WHERE tuned_ms = " +
                  std::to_string(1'700'000'000'000LL + 1));
  const auto listed = store_->list_samples("gpu|test|cc9.0", Precision::fp32);
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0].measured, sample_of(2).measured);
  EXPECT_EQ(store_->list_samples("gpu|test|cc9.0", Precision::fp32).size(), 1u);
}

INSTANTIATE_TEST_SUITE_P(Sqlite, PlanStoreConformance,
                         ::testing::Values(BackendParam{"SQLite", test::make_sqlite_backend}),
                         [](const auto&) { return std::string("Sqlite"); });
INSTANTIATE_TEST_SUITE_P(Tiered, PlanStoreConformance,
                         ::testing::Values(BackendParam{"Tiered", test::make_tiered_backend}),
                         [](const auto&) { return std::string("Tiered"); });
INSTANTIATE_TEST_SUITE_P(Postgres, PlanStoreConformance,
                         ::testing::Values(BackendParam{"PostgreSQL", test::make_postgres_backend}),
                         [](const auto&) { return std::string("Postgres"); });

}  // namespace
}  // namespace spmvd
