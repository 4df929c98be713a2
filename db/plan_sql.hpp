#pragma once
// The plans table's columns and the SQL generated from them, shared by the SQLite and
// PostgreSQL stores so that the key's shape and the winner rule live in one place. The two
// dialects differ only in placeholders (?n / $n) and in how text is compared bytewise.

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace spmvd {

struct SqlDialect {
  char placeholder;           // '?' (SQLite) or '$' (PostgreSQL), followed by the 1-based number
  std::string_view bytewise;  // appended to a text operand to compare it byte by byte
};
// SQLite's default collation (BINARY) is bytewise; PostgreSQL's database collation may not be.
inline constexpr SqlDialect kSqliteDialect{'?', ""};
inline constexpr SqlDialect kPostgresDialect{'$', " COLLATE \"C\""};

// Bound as placeholders 1..5 in this order by every statement that selects a plan by key.
inline constexpr std::array<std::string_view, 5> kPlanKeyColumns{
    "fingerprint", "device", "precision", "tuner_version", "model_version"};
// Written by every put that wins, after the key: placeholders 6..13; created_ms (14) on insert.
// tune_mode, tuning_ms and tuning_spmv_equivalents repeat the plan JSON's tuning record so that
// people can query what tuning costs without decoding JSON (docs/TUNER.md).
inline constexpr std::array<std::string_view, 8> kPlanValueColumns{
    "format_id", "format_name", "plan_json", "measured_ms", "updated_ms",
    "tune_mode", "tuning_ms", "tuning_spmv_equivalents"};
// The placeholder of created_ms in upsert_plan_sql.
inline constexpr int kPlanCreatedMsPlaceholder =
    static_cast<int>(kPlanKeyColumns.size() + kPlanValueColumns.size() + 1);

// "fingerprint, device, precision, tuner_version, model_version".
std::string plan_key_columns();
// "fingerprint = ?1 AND device = ?2 AND ..." in the dialect's placeholders.
std::string plan_key_predicate(const SqlDialect& dialect);
// INSERT ... ON CONFLICT DO UPDATE with the deterministic winner of plan_store.hpp: a row is
// replaced only by a faster plan, or an equally fast one whose JSON sorts first bytewise, so
// concurrent writers of one key converge on the same row whatever order their puts arrive in.
std::string upsert_plan_sql(const SqlDialect& dialect);

// The plan_partitions table (core/plan_partition.hpp): at most one row per plan, under the
// plan's key, deleted with it. A put that stores the plan (it wins, plan_store.hpp) first
// deletes the partition of the plan it replaced (erase_partition_sql), then inserts its own
// (insert_partition_sql) only while the stored plan is this one, so a put that loses writes
// nothing, and a plan stored earlier without its partition gets it.
//
// The plan of key ?1..?5 and its partition in one statement (one snapshot): plan_json,
// format_id, then kind, entry_count, entries (NULL where the plan has no partition).
std::string find_plan_sql(const SqlDialect& dialect);
// Inserts kind ?6, entry_count ?7 and entries ?8 under key ?1..?5 where the plans row of that
// key holds plan_json ?9; an existing partition of the key is kept.
std::string insert_partition_sql(const SqlDialect& dialect);
// Deletes the partition of key ?1..?5.
std::string erase_partition_sql(const SqlDialect& dialect);
// The entries column: each entry as 4 bytes, little-endian, whatever the host's byte order.
std::string partition_blob(std::span<const std::int32_t> entries);
// Back from the column; throws Error(invalid_argument) when the blob does not hold exactly
// entry_count entries.
std::vector<std::int32_t> partition_entries(std::string_view blob, std::int64_t entry_count);

// The samples table (plan_store.hpp MeasurementSample): bound as placeholders 1..10 in this
// order by insert_sample_sql, and selected after the id in this order by list_samples_sql.
inline constexpr std::array<std::string_view, 10> kSampleColumns{
    "device",       "precision",   "format_id",   "fingerprint", "tuned_ms",
    "model_version", "predicted_ms", "measured_ms", "sample_json", "recorded_ms"};
std::string insert_sample_sql(const SqlDialect& dialect);
// Keeps the newest (recorded_ms, then id) $4 samples of device $1, precision $2, format $3.
std::string trim_samples_sql(const SqlDialect& dialect);
// "SELECT id, <kSampleColumns> FROM samples" of device $1 and precision $2, oldest first.
std::string list_samples_sql(const SqlDialect& dialect);
// Deletes the sample with id $1.
std::string erase_sample_sql(const SqlDialect& dialect);

// Unix time in milliseconds: the created_ms / updated_ms / applied_ms columns.
std::int64_t now_unix_ms();

}  // namespace spmvd
