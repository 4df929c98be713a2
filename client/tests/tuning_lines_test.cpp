#include "client/tuning_lines.hpp"

#include <gtest/gtest.h>

namespace spmvd {
namespace {

v1::PlanInfo tuned_plan() {
  v1::PlanInfo plan;
  plan.set_measured_ms(0.5);
  plan.set_candidates_measured(3);
  v1::TuningInfo& t = *plan.mutable_tuning();
  t.set_mode("verify-top-k");
  t.set_k(4);
  t.set_expected_multiplies(1000);
  t.set_budget_ms(50.0);
  t.set_features_ms(1.0);
  t.set_features_spmv(2.0);
  t.set_ranking_ms(0.25);
  t.set_ranking_spmv(0.5);
  t.set_builds_ms(4.0);
  t.set_builds_spmv(8.0);
  t.set_measurements_ms(6.0);
  t.set_measurements_spmv(12.0);
  t.set_total_ms(11.25);
  t.set_total_spmv(22.5);
  return plan;
}

TEST(TuningLines, SummaryNamesTheModeKAndTotalCost) {
  EXPECT_EQ(tuning_summary(tuned_plan()), "verify-top-k k=4, 11.2 ms = 22 SpMV");
}

TEST(TuningLines, BreakdownShowsEveryStageInMsAndSpmvEquivalents) {
  EXPECT_EQ(tuning_breakdown(tuned_plan()),
            "tuning mode:   verify-top-k (k 4, 3 measured; budget 50.0 ms for 1000 multiplies)\n"
            "  features:    1.000 ms (2 SpMV)\n"
            "  ranking:     0.250 ms (0 SpMV)\n"
            "  builds:      4.000 ms (8 SpMV)\n"
            "  measurements:6.000 ms (12 SpMV)\n"
            "  total:       11.250 ms (22 SpMV)\n");
}

TEST(TuningLines, TheDefaultPlanSaysItIsUntuned) {
  v1::PlanInfo plan;
  plan.set_default_plan(true);
  EXPECT_EQ(tuning_summary(plan), "default (untuned)");
}

}  // namespace
}  // namespace spmvd
