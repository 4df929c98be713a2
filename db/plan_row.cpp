#include "db/plan_row.hpp"

#include <limits>

#include "core/error.hpp"

namespace spmvd {
namespace {

bool fits_u32(std::int64_t value) {
  return value >= 0 && value <= std::numeric_limits<std::uint32_t>::max();
}

}  // namespace

std::string plan_row_problem(const PlanKey& key, const Plan& plan, std::int64_t format_id) {
  if (plan.precision != key.precision) {
    return "plan_json precision " + std::string(to_string(plan.precision)) +
           " disagrees with the key's " + std::string(to_string(key.precision));
  }
  if (plan.tuner_version != key.tuner_version) {
    return "plan_json tuner_version " + std::to_string(plan.tuner_version) +
           " disagrees with the key's " + std::to_string(key.tuner_version);
  }
  if (format_id != plan.format.value) {
    return "format_id column " + std::to_string(format_id) + " disagrees with plan_json format " +
           std::to_string(plan.format.value);
  }
  return {};
}

std::variant<StoredPlan, std::string> decode_plan_row(const PlanRow& row) {
  StoredPlan stored;
  try {
    stored.plan = plan_from_json(row.plan_json);
  } catch (const Error& e) {
    return std::string(e.what());
  }
  const auto fingerprint = fingerprint_from_hex(row.fingerprint);
  if (!fingerprint) return "fingerprint '" + row.fingerprint + "' is not 32 hex digits";
  if (row.precision != static_cast<std::int64_t>(stored.plan.precision) ||
      row.tuner_version != static_cast<std::int64_t>(stored.plan.tuner_version)) {
    return "key columns (precision " + std::to_string(row.precision) + ", tuner_version " +
           std::to_string(row.tuner_version) + ") disagree with plan_json";
  }
  if (!fits_u32(row.model_version)) {
    return "model_version " + std::to_string(row.model_version) + " is out of range";
  }
  stored.key = PlanKey{*fingerprint, row.device, stored.plan.precision,
                       stored.plan.tuner_version, static_cast<std::uint32_t>(row.model_version)};
  std::string problem = plan_row_problem(stored.key, stored.plan, row.format_id);
  if (!problem.empty()) return problem;
  stored.created_ms = row.created_ms;
  stored.updated_ms = row.updated_ms;
  return stored;
}

std::string describe_plan_row(const PlanRow& row) {
  return "fingerprint=" + row.fingerprint + " device='" + row.device +
         "' precision=" + std::to_string(row.precision) +
         " tuner_version=" + std::to_string(row.tuner_version) +
         " model_version=" + std::to_string(row.model_version);
}

}  // namespace spmvd
