#include "server/plan_lookup.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"
#include "db/sqlite_plan_store.hpp"

namespace spmvd {
namespace {

PlanKey key(Precision precision) {
  return {Fingerprint{1, 2}, "cpu|test", precision, 3};
}

Plan plan(Precision precision) {
  Plan p;
  p.format = FormatId{1};
  p.format_name = "cpu_csr";
  p.precision = precision;
  p.tuner_version = 3;
  return p;
}

TEST(PlanLookup, FindsThePrecisionsThatAreStored) {
  SqlitePlanStore store({.path = ":memory:"});
  store.put(key(Precision::fp64), plan(Precision::fp64));
  const auto found = find_plans(store, {key(Precision::fp32), key(Precision::fp64)});
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].key, key(Precision::fp64));
  EXPECT_EQ(found[0].plan, plan(Precision::fp64));
}

TEST(PlanLookup, NothingStoredIsNotFoundNamingTheKey) {
  SqlitePlanStore store({.path = ":memory:"});
  try {
    find_plans(store, {key(Precision::fp32), key(Precision::fp64)});
    FAIL() << "found a plan in an empty store";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::not_found);
    EXPECT_STREQ(e.what(), "no stored plan for fingerprint 00000000000000010000000000000002 on "
                           "device 'cpu|test', tuner version 3, fp32 or fp64");
  }
}

TEST(PlanLookup, EraseCountsWhatWasStored) {
  SqlitePlanStore store({.path = ":memory:"});
  store.put(key(Precision::fp32), plan(Precision::fp32));
  store.put(key(Precision::fp64), plan(Precision::fp64));
  EXPECT_EQ(erase_plans(store, {key(Precision::fp32), key(Precision::fp64)}), 2u);
  EXPECT_EQ(erase_plans(store, {key(Precision::fp64)}), 0u);
}

}  // namespace
}  // namespace spmvd
