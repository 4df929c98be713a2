#include "db/plan_sql.hpp"

#include <chrono>

namespace spmvd {
namespace {

std::string placeholder(const SqlDialect& dialect, std::size_t number) {
  return dialect.placeholder + std::to_string(number);
}

}  // namespace

std::string plan_key_columns() {
  std::string sql;
  for (std::size_t i = 0; i < kPlanKeyColumns.size(); ++i)
    sql += (i == 0 ? "" : ", ") + std::string(kPlanKeyColumns[i]);
  return sql;
}

std::string plan_key_predicate(const SqlDialect& dialect) {
  std::string sql;
  for (std::size_t i = 0; i < kPlanKeyColumns.size(); ++i)
    sql += (i == 0 ? "" : " AND ") + std::string(kPlanKeyColumns[i]) + " = " +
           placeholder(dialect, i + 1);
  return sql;
}

std::string upsert_plan_sql(const SqlDialect& dialect) {
  std::string columns = plan_key_columns();
  std::string params;
  std::string updates;
  const std::size_t n_key = kPlanKeyColumns.size();
  for (std::size_t i = 0; i < n_key; ++i)
    params += (i == 0 ? "" : ", ") + placeholder(dialect, i + 1);
  for (std::size_t i = 0; i < kPlanValueColumns.size(); ++i) {
    const std::string column(kPlanValueColumns[i]);
    columns += ", " + column;
    params += ", " + placeholder(dialect, n_key + i + 1);
    updates.append(i == 0 ? "" : ", ").append(column).append(" = excluded.").append(column);
  }
  columns += ", created_ms";
  params += ", " + placeholder(dialect, n_key + kPlanValueColumns.size() + 1);
  const std::string bytewise(dialect.bytewise);
  return "INSERT INTO plans (" + columns + ") VALUES (" + params + ") ON CONFLICT (" +
         plan_key_columns() + ") DO UPDATE SET " + updates +
         " WHERE excluded.measured_ms < plans.measured_ms OR (excluded.measured_ms ="
         " plans.measured_ms AND excluded.plan_json" +
         bytewise + " < plans.plan_json" + bytewise + ")";
}

std::int64_t now_unix_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace spmvd
