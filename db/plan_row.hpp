#pragma once
// A plans-table row as every backend reads it, and the one check that decides whether it can be
// trusted: so SQLite and PostgreSQL drop exactly the same rows (plan_store.hpp).

#include <cstdint>
#include <string>
#include <variant>

#include "core/plan.hpp"
#include "db/plan_key.hpp"
#include "db/plan_store.hpp"

namespace spmvd {

// The columns as stored, before any decoding, so that a row that does not decode can still be
// named in a log and deleted by its raw key.
struct PlanRow {
  std::string fingerprint;  // 32 lowercase hex digits when sound
  std::string device;
  std::int64_t precision = 0;
  std::int64_t tuner_version = 0;
  std::int64_t model_version = 0;
  std::int64_t format_id = 0;
  std::string plan_json;
  std::int64_t created_ms = 0;
  std::int64_t updated_ms = 0;
};

// Why a decoded plan cannot be the one stored under key with this format_id column, or "" when
// it can (precision, tuner version and format must agree between the columns and the JSON).
std::string plan_row_problem(const PlanKey& key, const Plan& plan, std::int64_t format_id);

// The stored plan a row holds, or the reason it cannot be trusted (for the warning that
// precedes dropping it).
std::variant<StoredPlan, std::string> decode_plan_row(const PlanRow& row);

// For logs: "fingerprint=... device='...'" from raw columns.
std::string describe_plan_row(const PlanRow& row);

}  // namespace spmvd
