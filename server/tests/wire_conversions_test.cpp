#include "server/wire_conversions.hpp"

#include <gtest/gtest.h>

namespace spmvd {
namespace {

TEST(WireConversions, APlanCarriesItsTuningCostInMsAndSpmvEquivalents) {
  Plan plan;
  plan.format_name = "cuda_sell";
  plan.measured_ms = 0.5;
  plan.candidates_measured = 3;
  plan.tuning = TuningRecord{.mode = TuneMode::verify_top_k,
                             .k = 4,
                             .expected_multiplies = 2000,
                             .budget_ms = 100.0,
                             .cost = {.features_ms = 1.0,
                                      .ranking_ms = 0.5,
                                      .builds_ms = 10.0,
                                      .measurements_ms = 20.0,
                                      .total_ms = 31.5}};
  const v1::PlanInfo info = to_wire(plan, "gpu|test");
  const v1::TuningInfo& t = info.tuning();
  EXPECT_EQ(t.mode(), "verify-top-k");
  EXPECT_EQ(t.k(), 4u);
  EXPECT_EQ(t.expected_multiplies(), 2000u);
  EXPECT_DOUBLE_EQ(t.budget_ms(), 100.0);
  EXPECT_DOUBLE_EQ(t.features_ms(), 1.0);
  EXPECT_DOUBLE_EQ(t.features_spmv(), 2.0);
  EXPECT_DOUBLE_EQ(t.ranking_spmv(), 1.0);
  EXPECT_DOUBLE_EQ(t.builds_spmv(), 20.0);
  EXPECT_DOUBLE_EQ(t.measurements_spmv(), 40.0);
  EXPECT_DOUBLE_EQ(t.total_ms(), 31.5);
  EXPECT_DOUBLE_EQ(t.total_spmv(), 63.0);
  EXPECT_FALSE(info.default_plan());
}

}  // namespace
}  // namespace spmvd
