#include "db/plan_sql.hpp"

#include <chrono>

#include "core/error.hpp"

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

std::string find_plan_sql(const SqlDialect& dialect) {
  return "SELECT plan_json, format_id, kind, entry_count, entries FROM plans LEFT JOIN"
         " plan_partitions USING (" +
         plan_key_columns() + ") WHERE " + plan_key_predicate(dialect);
}

std::string insert_partition_sql(const SqlDialect& dialect) {
  const std::size_t n_key = kPlanKeyColumns.size();
  return "INSERT INTO plan_partitions (" + plan_key_columns() +
         ", kind, entry_count, entries) SELECT " + plan_key_columns() + ", " +
         placeholder(dialect, n_key + 1) + ", " + placeholder(dialect, n_key + 2) + ", " +
         placeholder(dialect, n_key + 3) + " FROM plans WHERE " + plan_key_predicate(dialect) +
         " AND plan_json = " + placeholder(dialect, n_key + 4) + " ON CONFLICT DO NOTHING";
}

std::string erase_partition_sql(const SqlDialect& dialect) {
  return "DELETE FROM plan_partitions WHERE " + plan_key_predicate(dialect);
}

std::string partition_blob(std::span<const std::int32_t> entries) {
  std::string blob(entries.size() * 4, '\0');
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const auto bits = static_cast<std::uint32_t>(entries[i]);
    for (std::size_t b = 0; b < 4; ++b)
      blob[4 * i + b] = static_cast<char>((bits >> (8 * b)) & 0xffu);
  }
  return blob;
}

std::vector<std::int32_t> partition_entries(std::string_view blob, std::int64_t entry_count) {
  if (entry_count < 0 || blob.size() != static_cast<std::uint64_t>(entry_count) * 4)
    throw_invalid("plan partition: " + std::to_string(blob.size()) + " bytes for " +
                  std::to_string(entry_count) + " 4-byte entries");
  std::vector<std::int32_t> entries(static_cast<std::size_t>(entry_count));
  for (std::size_t i = 0; i < entries.size(); ++i) {
    std::uint32_t bits = 0;
    for (std::size_t b = 0; b < 4; ++b)
      bits |= static_cast<std::uint32_t>(static_cast<unsigned char>(blob[4 * i + b])) << (8 * b);
    entries[i] = static_cast<std::int32_t>(bits);
  }
  return entries;
}

namespace {

std::string sample_columns() {
  std::string sql;
  for (std::size_t i = 0; i < kSampleColumns.size(); ++i)
    sql += (i == 0 ? "" : ", ") + std::string(kSampleColumns[i]);
  return sql;
}

// "device = P1 AND precision = P2 AND format_id = P3" (the format clause when with_format).
std::string sample_owner_predicate(const SqlDialect& dialect, bool with_format) {
  return "device = " + placeholder(dialect, 1) + " AND precision = " + placeholder(dialect, 2) +
         (with_format ? " AND format_id = " + placeholder(dialect, 3) : "");
}

}  // namespace

std::string insert_sample_sql(const SqlDialect& dialect) {
  std::string params;
  for (std::size_t i = 0; i < kSampleColumns.size(); ++i)
    params += (i == 0 ? "" : ", ") + placeholder(dialect, i + 1);
  return "INSERT INTO samples (" + sample_columns() + ") VALUES (" + params + ")";
}

std::string trim_samples_sql(const SqlDialect& dialect) {
  const std::string owner = sample_owner_predicate(dialect, true);
  return "DELETE FROM samples WHERE " + owner + " AND id NOT IN (SELECT id FROM samples WHERE " +
         owner + " ORDER BY recorded_ms DESC, id DESC LIMIT " + placeholder(dialect, 4) + ")";
}

std::string list_samples_sql(const SqlDialect& dialect) {
  return "SELECT id, " + sample_columns() + " FROM samples WHERE " +
         sample_owner_predicate(dialect, false) + " ORDER BY recorded_ms, id";
}

std::string erase_sample_sql(const SqlDialect& dialect) {
  return "DELETE FROM samples WHERE id = " + placeholder(dialect, 1);
}

std::int64_t now_unix_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace spmvd
