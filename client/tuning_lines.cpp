#include "client/tuning_lines.hpp"

#include <cstdio>

namespace spmvd {
namespace {

std::string format(const char* pattern, auto... values) {
  char buffer[256];
  std::snprintf(buffer, sizeof buffer, pattern, values...);
  return buffer;
}

std::string stage(const char* name, double ms, double spmv) {
  return format("%-15s%.3f ms (%.0f SpMV)\n", name, ms, spmv);
}

}  // namespace

std::string tuning_summary(const v1::PlanInfo& plan) {
  if (plan.default_plan() || plan.tuning().mode().empty()) return "default (untuned)";
  const v1::TuningInfo& t = plan.tuning();
  return format("%s k=%u, %.1f ms = %.0f SpMV", t.mode().c_str(), t.k(), t.total_ms(),
                t.total_spmv());
}

std::string tuning_breakdown(const v1::PlanInfo& plan) {
  if (plan.default_plan() || plan.tuning().mode().empty())
    return "tuning:        none yet (the default plan serves until tuning finishes)\n";
  const v1::TuningInfo& t = plan.tuning();
  const std::string budget =
      t.budget_ms() > 0.0
          ? format("budget %.1f ms for %llu multiplies", t.budget_ms(),
                   static_cast<unsigned long long>(t.expected_multiplies()))
          : std::string("unbudgeted");
  return format("%-15s%s (k %u, %u measured; %s)\n", "tuning mode:", t.mode().c_str(), t.k(),
                plan.candidates_measured(), budget.c_str()) +
         stage("  features:", t.features_ms(), t.features_spmv()) +
         stage("  ranking:", t.ranking_ms(), t.ranking_spmv()) +
         stage("  builds:", t.builds_ms(), t.builds_spmv()) +
         stage("  measurements:", t.measurements_ms(), t.measurements_spmv()) +
         stage("  total:", t.total_ms(), t.total_spmv());
}

}  // namespace spmvd
