#include "db/sqlite_plan_store.hpp"

#include <spdlog/spdlog.h>
#include <sqlite3.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <limits>
#include <mutex>
#include <set>
#include <string_view>
#include <thread>
#include <tuple>
#include <variant>

#include "core/error.hpp"
#include "db/plan_row.hpp"
#include "db/plan_sql.hpp"
#include "db/sample_row.hpp"
#include "db/sqlite_migrations.hpp"

namespace spmvd {
namespace {

// ---- All SQL of this backend; the plans table's is generated from its columns (plan_sql.hpp) --
// The key columns are bound as ?1..?5 in kPlanKeyColumns order by bind_key_columns().

struct SqlText {
  std::string find_plan = find_plan_sql(kSqliteDialect);
  std::string upsert_plan = upsert_plan_sql(kSqliteDialect);
  std::string insert_partition = insert_partition_sql(kSqliteDialect);
  std::string erase_partition = erase_partition_sql(kSqliteDialect);
  std::string erase_plan = "DELETE FROM plans WHERE " + plan_key_predicate(kSqliteDialect);
  std::string list_plans = "SELECT " + plan_key_columns() +
                           ", plan_json, format_id, created_ms, updated_ms FROM plans"
                           " ORDER BY updated_ms DESC LIMIT ?1";
  std::string erase_device = "DELETE FROM plans WHERE device = ?1";
  std::string upsert_calibration =
      "INSERT INTO calibrations (device, model_version, model_json, created_ms)"
      " VALUES (?1, ?2, ?3, ?4) ON CONFLICT (device, model_version) DO UPDATE SET"
      " model_json = excluded.model_json, created_ms = excluded.created_ms";
  std::string find_calibration =
      "SELECT model_json FROM calibrations WHERE device = ?1 AND model_version = ?2";
  std::string list_calibrations =
      "SELECT device, model_version, model_json, created_ms FROM calibrations"
      " ORDER BY device, model_version";
  std::string insert_sample = insert_sample_sql(kSqliteDialect);
  std::string trim_samples = trim_samples_sql(kSqliteDialect);
  std::string list_samples = list_samples_sql(kSqliteDialect);
  std::string erase_sample = erase_sample_sql(kSqliteDialect);
  // Migrations (the DDL itself is in sqlite_migrations.cpp).
  std::string has_version_table =
      "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'";
  std::string create_version_table =
      "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY,"
      " description TEXT NOT NULL, applied_ms INTEGER NOT NULL)";
  std::string read_version = "SELECT COALESCE(MAX(version), 0) FROM schema_version";
  std::string record_version =
      "INSERT INTO schema_version (version, description, applied_ms) VALUES (?1, ?2, ?3)";
};

// ---- helpers ---------------------------------------------------------------------------------

bool is_busy(int rc) { return (rc & 0xff) == SQLITE_BUSY || (rc & 0xff) == SQLITE_LOCKED; }

ErrorCode error_code_for(int rc) {
  switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
    case SQLITE_CANTOPEN:
    case SQLITE_IOERR:
    case SQLITE_READONLY:
      return ErrorCode::unavailable;
    case SQLITE_FULL:
      return ErrorCode::resource_exhausted;
    default:
      return ErrorCode::internal;
  }
}

struct StatementFinalizer {
  void operator()(sqlite3_stmt* statement) const noexcept { sqlite3_finalize(statement); }
};
using StatementPtr = std::unique_ptr<sqlite3_stmt, StatementFinalizer>;

// Resets a statement when the operation using it ends, however it ends: a SELECT left stepped
// keeps a read transaction open, which blocks WAL checkpoints for every connection.
class ResetOnExit {
 public:
  explicit ResetOnExit(sqlite3_stmt* statement) : statement_(statement) {}
  ~ResetOnExit() {
    sqlite3_reset(statement_);
    sqlite3_clear_bindings(statement_);
  }
  ResetOnExit(const ResetOnExit&) = delete;
  ResetOnExit& operator=(const ResetOnExit&) = delete;

 private:
  sqlite3_stmt* statement_;
};

std::string column_text(sqlite3_stmt* statement, int column) {
  const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(statement, column));
  if (text == nullptr) return {};
  return std::string(text, static_cast<std::size_t>(sqlite3_column_bytes(statement, column)));
}

}  // namespace

// ---- the store -------------------------------------------------------------------------------

class SqlitePlanStore::Impl {
 public:
  explicit Impl(SqlitePlanStoreOptions options) : options_(std::move(options)) {
    open();
    try {
      configure();
      migrate();
      prepare_statements();
    } catch (...) {
      close();
      throw;
    }
  }
  ~Impl() { close(); }
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;

  std::optional<Plan> find(const PlanKey& key) {
    std::lock_guard lock(mutex_);
    sqlite3_stmt* s = find_plan_.get();
    ResetOnExit reset(s);
    bind_key(s, key);
    const int rc = first_step(s, "find plan");
    if (rc == SQLITE_DONE) return std::nullopt;
    if (rc != SQLITE_ROW) fail(rc, "find plan " + to_string(key));

    const std::string json = column_text(s, 0);
    const std::int64_t format_id = sqlite3_column_int64(s, 1);
    std::string problem;
    std::optional<Plan> plan;
    try {
      plan = plan_from_json(json);
      problem = plan_row_problem(key, *plan, format_id);
      if (sqlite3_column_type(s, 2) != SQLITE_NULL) {
        const auto* blob = static_cast<const char*>(sqlite3_column_blob(s, 4));
        const std::string_view bytes(blob != nullptr ? blob : "",
                                     static_cast<std::size_t>(sqlite3_column_bytes(s, 4)));
        plan->partition = std::make_shared<const PlanPartition>(
            PlanPartition{column_text(s, 2), partition_entries(bytes, sqlite3_column_int64(s, 3))});
      }
    } catch (const Error& e) {
      problem = e.what();
    }
    sqlite3_reset(s);  // end the read before deleting
    if (problem.empty()) return plan;

    spdlog::warn("plan store '{}': dropping stored plan {}: {}", options_.path, to_string(key),
                 problem);
    erase_locked(key);
    return std::nullopt;
  }

  void put(const PlanKey& key, const Plan& plan) {
    if (plan.precision != key.precision || plan.tuner_version != key.tuner_version) {
      throw_invalid("plan store: plan (precision " + std::string(to_string(plan.precision)) +
                    ", tuner_version " + std::to_string(plan.tuner_version) +
                    ") does not match its key " + to_string(key));
    }
    const std::string json = plan_to_json(plan);  // outside the lock: may throw, takes time
    const std::int64_t now_ms = now_unix_ms();
    std::lock_guard lock(mutex_);
    sqlite3_stmt* s = upsert_plan_.get();
    ResetOnExit reset(s);
    bind_key(s, key);
    bind_int64(s, 6, plan.format.value);
    bind_text(s, 7, plan.format_name);
    bind_text(s, 8, json);
    bind_double(s, 9, plan.measured_ms);
    bind_int64(s, 10, now_ms);  // updated_ms
    bind_text(s, 11, to_string(plan.tuning.mode));
    bind_double(s, 12, plan.tuning.cost.total_ms);
    bind_double(s, 13, plan.tuning_spmv_equivalents());
    bind_int64(s, kPlanCreatedMsPlaceholder, now_ms);  // created_ms, kept on conflict
    // One transaction: the plan and its partition (plan_sql.hpp) are stored together or not.
    exec("BEGIN IMMEDIATE", "begin put plan");
    try {
      const int rc = sqlite3_step(s);
      if (rc != SQLITE_DONE) fail(rc, "put plan " + to_string(key));
      if (sqlite3_changes(db_) > 0) {  // this plan won: the one it replaced had its partition
        sqlite3_stmt* erase = erase_partition_.get();
        ResetOnExit reset_erase(erase);
        bind_key(erase, key);
        const int erased = sqlite3_step(erase);
        if (erased != SQLITE_DONE) fail(erased, "replace partition " + to_string(key));
      }
      if (plan.partition) {
        sqlite3_stmt* insert = insert_partition_.get();
        ResetOnExit reset_insert(insert);
        bind_key(insert, key);
        bind_text(insert, 6, plan.partition->kind);
        bind_int64(insert, 7, static_cast<std::int64_t>(plan.partition->entries.size()));
        const std::string blob = partition_blob(plan.partition->entries);
        check_bind(sqlite3_bind_blob64(insert, 8, blob.data(), blob.size(), SQLITE_STATIC));
        bind_text(insert, 9, json);
        const int inserted = sqlite3_step(insert);
        if (inserted != SQLITE_DONE) fail(inserted, "put partition " + to_string(key));
      }
      exec("COMMIT", "commit put plan");
    } catch (...) {
      sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
      throw;
    }
  }

  bool erase(const PlanKey& key) {
    std::lock_guard lock(mutex_);
    return erase_locked(key);
  }

  std::vector<StoredPlan> list(std::size_t limit) {
    std::lock_guard lock(mutex_);
    std::vector<StoredPlan> plans;
    std::vector<PlanRow> corrupt;
    {
      sqlite3_stmt* s = list_plans_.get();
      ResetOnExit reset(s);
      const auto max = static_cast<std::size_t>(std::numeric_limits<std::int64_t>::max());
      bind_int64(s, 1, static_cast<std::int64_t>(std::min(limit, max)));
      int rc = first_step(s, "list plans");
      for (; rc == SQLITE_ROW; rc = sqlite3_step(s)) {
        PlanRow row{.fingerprint = column_text(s, 0),
                    .device = column_text(s, 1),
                    .precision = sqlite3_column_int64(s, 2),
                    .tuner_version = sqlite3_column_int64(s, 3),
                    .model_version = sqlite3_column_int64(s, 4),
                    .format_id = sqlite3_column_int64(s, 6),
                    .plan_json = column_text(s, 5),
                    .created_ms = sqlite3_column_int64(s, 7),
                    .updated_ms = sqlite3_column_int64(s, 8)};
        auto decoded = decode_plan_row(row);
        if (auto* problem = std::get_if<std::string>(&decoded)) {
          spdlog::warn("plan store '{}': dropping stored plan {}: {}", options_.path,
                       describe_plan_row(row), *problem);
          corrupt.push_back(std::move(row));
          continue;
        }
        plans.push_back(std::move(std::get<StoredPlan>(decoded)));
      }
      if (rc != SQLITE_DONE) fail(rc, "list plans");
    }
    for (const PlanRow& row : corrupt) {
      erase_columns(row.fingerprint, row.device, row.precision, row.tuner_version,
                    row.model_version);
    }
    return plans;
  }

  std::size_t erase_all_for_device(const std::string& device_signature) {
    std::lock_guard lock(mutex_);
    sqlite3_stmt* s = erase_device_.get();
    ResetOnExit reset(s);
    bind_text(s, 1, device_signature);
    const int rc = first_step(s, "erase plans of device");
    if (rc != SQLITE_DONE) fail(rc, "erase plans of device '" + device_signature + "'");
    return static_cast<std::size_t>(sqlite3_changes(db_));
  }

  void put_calibration(const std::string& device_signature, std::uint32_t model_version,
                       const std::string& model_json) {
    const std::int64_t now_ms = now_unix_ms();
    std::lock_guard lock(mutex_);
    sqlite3_stmt* s = upsert_calibration_.get();
    ResetOnExit reset(s);
    bind_text(s, 1, device_signature);
    bind_int64(s, 2, model_version);
    bind_text(s, 3, model_json);
    bind_int64(s, 4, now_ms);
    const int rc = first_step(s, "put calibration");
    if (rc != SQLITE_DONE) {
      fail(rc, "put calibration of device '" + device_signature + "' model version " +
                   std::to_string(model_version));
    }
  }

  std::optional<std::string> find_calibration(const std::string& device_signature,
                                              std::uint32_t model_version) {
    std::lock_guard lock(mutex_);
    sqlite3_stmt* s = find_calibration_.get();
    ResetOnExit reset(s);
    bind_text(s, 1, device_signature);
    bind_int64(s, 2, model_version);
    const int rc = first_step(s, "find calibration");
    if (rc == SQLITE_DONE) return std::nullopt;
    if (rc != SQLITE_ROW) {
      fail(rc, "find calibration of device '" + device_signature + "' model version " +
                   std::to_string(model_version));
    }
    return column_text(s, 0);
  }

  std::vector<StoredCalibration> list_calibrations() {
    std::lock_guard lock(mutex_);
    sqlite3_stmt* s = list_calibrations_.get();
    ResetOnExit reset(s);
    std::vector<StoredCalibration> calibrations;
    int rc = first_step(s, "list calibrations");
    for (; rc == SQLITE_ROW; rc = sqlite3_step(s)) {
      calibrations.push_back(StoredCalibration{
          .device_signature = column_text(s, 0),
          .model_version = static_cast<std::uint32_t>(sqlite3_column_int64(s, 1)),
          .model_json = column_text(s, 2),
          .created_ms = sqlite3_column_int64(s, 3),
      });
    }
    if (rc != SQLITE_DONE) fail(rc, "list calibrations");
    return calibrations;
  }

  void put_samples(const std::vector<MeasurementSample>& samples, std::size_t keep_per_format) {
    if (samples.empty()) return;
    const std::int64_t now_ms = now_unix_ms();
    std::vector<SampleRow> rows;
    rows.reserve(samples.size());
    for (const MeasurementSample& sample : samples) rows.push_back(sample_row(sample, now_ms));
    std::set<std::tuple<std::string, std::int64_t, std::int64_t>> owners;
    for (const SampleRow& row : rows) owners.emplace(row.device, row.precision, row.format_id);
    const auto max = static_cast<std::size_t>(std::numeric_limits<std::int64_t>::max());
    const auto keep = static_cast<std::int64_t>(std::min(keep_per_format, max));

    std::lock_guard lock(mutex_);
    // One transaction: one fsync for a tuning's samples, and no reader sees them untrimmed.
    exec("BEGIN IMMEDIATE", "begin put samples");
    try {
      for (const SampleRow& row : rows) {
        sqlite3_stmt* s = insert_sample_.get();
        ResetOnExit reset(s);
        bind_text(s, 1, row.device);
        bind_int64(s, 2, row.precision);
        bind_int64(s, 3, row.format_id);
        bind_text(s, 4, row.fingerprint);
        bind_int64(s, 5, row.tuned_ms);
        bind_int64(s, 6, row.model_version);
        bind_double(s, 7, row.predicted_ms);
        bind_double(s, 8, row.measured_ms);
        bind_text(s, 9, row.sample_json);
        bind_int64(s, 10, row.recorded_ms);
        const int rc = sqlite3_step(s);
        if (rc != SQLITE_DONE) fail(rc, "put sample");
      }
      for (const auto& [device, precision, format_id] : owners) {
        sqlite3_stmt* s = trim_samples_.get();
        ResetOnExit reset(s);
        bind_text(s, 1, device);
        bind_int64(s, 2, precision);
        bind_int64(s, 3, format_id);
        bind_int64(s, 4, keep);
        const int rc = sqlite3_step(s);
        if (rc != SQLITE_DONE) fail(rc, "trim samples");
      }
      exec("COMMIT", "commit put samples");
    } catch (...) {
      sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
      throw;
    }
  }

  std::vector<MeasurementSample> list_samples(const std::string& device_signature,
                                              Precision precision) {
    std::lock_guard lock(mutex_);
    std::vector<MeasurementSample> samples;
    std::vector<std::int64_t> corrupt;
    {
      sqlite3_stmt* s = list_samples_.get();
      ResetOnExit reset(s);
      bind_text(s, 1, device_signature);
      bind_int64(s, 2, static_cast<std::int64_t>(precision));
      int rc = first_step(s, "list samples");
      for (; rc == SQLITE_ROW; rc = sqlite3_step(s)) {
        const SampleRow row{.id = sqlite3_column_int64(s, 0),
                            .device = column_text(s, 1),
                            .precision = sqlite3_column_int64(s, 2),
                            .format_id = sqlite3_column_int64(s, 3),
                            .fingerprint = column_text(s, 4),
                            .tuned_ms = sqlite3_column_int64(s, 5),
                            .model_version = sqlite3_column_int64(s, 6),
                            .predicted_ms = sqlite3_column_double(s, 7),
                            .measured_ms = sqlite3_column_double(s, 8),
                            .sample_json = column_text(s, 9),
                            .recorded_ms = sqlite3_column_int64(s, 10)};
        auto decoded = decode_sample_row(row);
        if (auto* problem = std::get_if<std::string>(&decoded)) {
          spdlog::warn("plan store '{}': dropping stored sample {}: {}", options_.path, row.id,
                       *problem);
          corrupt.push_back(row.id);
          continue;
        }
        samples.push_back(std::move(std::get<MeasurementSample>(decoded)));
      }
      if (rc != SQLITE_DONE) fail(rc, "list samples");
    }
    for (const std::int64_t id : corrupt) {
      sqlite3_stmt* s = erase_sample_.get();
      ResetOnExit reset(s);
      bind_int64(s, 1, id);
      const int rc = first_step(s, "erase sample");
      if (rc != SQLITE_DONE) fail(rc, "erase sample " + std::to_string(id));
    }
    return samples;
  }

  int schema_version() {
    std::lock_guard lock(mutex_);
    return read_schema_version();
  }

 private:
  // ---- open, configure, migrate ----

  void open() {
    const int rc =
        sqlite3_open_v2(options_.path.c_str(), &db_,
                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
    if (rc != SQLITE_OK) {
      const std::string reason = db_ != nullptr ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
      sqlite3_close_v2(db_);
      db_ = nullptr;
      throw Error(ErrorCode::unavailable,
                  "plan store: cannot open SQLite database '" + options_.path + "': " + reason);
    }
    sqlite3_extended_result_codes(db_, 1);
  }

  void configure() {
    sqlite3_busy_timeout(db_, static_cast<int>(std::min<std::uint32_t>(
                                  options_.busy_timeout_ms, std::numeric_limits<int>::max())));
    // WAL: readers do not block the writer and a committed transaction is in the log before
    // put returns; NORMAL syncs at checkpoints only, which is safe against process crashes.
    const std::string mode = query_text("PRAGMA journal_mode = WAL");
    if (mode != "wal" && mode != "memory") {
      spdlog::warn(
          "plan store '{}': journal mode is '{}', not WAL (file system without shared "
          "memory?): concurrent daemons will block each other",
          options_.path, mode);
    }
    exec("PRAGMA synchronous = NORMAL", "set synchronous mode");
  }

  void migrate() {
    const auto migrations = sqlite_migrations();
    for (std::size_t i = 0; i < migrations.size(); ++i) {
      if (migrations[i].version != static_cast<int>(i + 1)) {
        throw Error(ErrorCode::internal, "plan store: SQLite migration at position " +
                                             std::to_string(i) + " has version " +
                                             std::to_string(migrations[i].version) + ", expected " +
                                             std::to_string(i + 1));
      }
    }
    const int latest = sqlite_latest_schema_version();
    if (has_version_table() && check_version(read_schema_version(), latest) == latest) return;

    // IMMEDIATE takes the write lock now, so two daemons opening a new file migrate it once:
    // the second waits, then sees the version the first recorded.
    exec("BEGIN IMMEDIATE", "begin migration");
    try {
      exec(sql_.create_version_table.c_str(), "create schema_version");
      const int current = check_version(read_schema_version(), latest);
      StatementPtr record = prepare(sql_.record_version);
      for (const SqliteMigration& step : migrations) {
        if (step.version <= current) continue;
        exec(step.sql, "apply migration " + std::to_string(step.version));
        ResetOnExit reset(record.get());
        bind_int64(record.get(), 1, step.version);
        bind_text(record.get(), 2, step.description);
        bind_int64(record.get(), 3, now_unix_ms());
        const int rc = sqlite3_step(record.get());
        if (rc != SQLITE_DONE) fail(rc, "record migration " + std::to_string(step.version));
        spdlog::info("plan store '{}': applied schema migration {} ({})", options_.path,
                     step.version, step.description);
      }
      exec("COMMIT", "commit migration");
    } catch (...) {
      sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
      throw;
    }
  }

  int check_version(int current, int latest) const {
    if (current > latest) {
      throw Error(ErrorCode::failed_precondition,
                  "plan store: SQLite database '" + options_.path + "' has schema version " +
                      std::to_string(current) + ", newer than the " + std::to_string(latest) +
                      " this binary knows; upgrade spmvd or use another database file");
    }
    return current;
  }

  bool has_version_table() {
    StatementPtr s = prepare(sql_.has_version_table);
    const int rc = first_step(s.get(), "read schema");
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) fail(rc, "read schema");
    return rc == SQLITE_ROW;
  }

  int read_schema_version() {
    StatementPtr s = prepare(sql_.read_version);
    const int rc = first_step(s.get(), "read schema version");
    if (rc != SQLITE_ROW) fail(rc, "read schema version");
    return sqlite3_column_int(s.get(), 0);
  }

  void prepare_statements() {
    find_plan_ = prepare(sql_.find_plan);
    upsert_plan_ = prepare(sql_.upsert_plan);
    insert_partition_ = prepare(sql_.insert_partition);
    erase_partition_ = prepare(sql_.erase_partition);
    erase_plan_ = prepare(sql_.erase_plan);
    list_plans_ = prepare(sql_.list_plans);
    erase_device_ = prepare(sql_.erase_device);
    upsert_calibration_ = prepare(sql_.upsert_calibration);
    find_calibration_ = prepare(sql_.find_calibration);
    list_calibrations_ = prepare(sql_.list_calibrations);
    insert_sample_ = prepare(sql_.insert_sample);
    trim_samples_ = prepare(sql_.trim_samples);
    list_samples_ = prepare(sql_.list_samples);
    erase_sample_ = prepare(sql_.erase_sample);
  }

  void close() noexcept {
    find_plan_.reset();
    upsert_plan_.reset();
    insert_partition_.reset();
    erase_partition_.reset();
    erase_plan_.reset();
    list_plans_.reset();
    erase_device_.reset();
    upsert_calibration_.reset();
    find_calibration_.reset();
    list_calibrations_.reset();
    insert_sample_.reset();
    trim_samples_.reset();
    list_samples_.reset();
    erase_sample_.reset();
    if (db_ != nullptr) {
      const int rc = sqlite3_close_v2(db_);
      if (rc != SQLITE_OK) {
        spdlog::warn("plan store '{}': close: {}", options_.path, sqlite3_errstr(rc));
      }
      db_ = nullptr;
    }
  }

  // ---- plan rows ----

  bool erase_locked(const PlanKey& key) {
    return erase_columns(key.fingerprint.hex(), key.device_signature,
                         static_cast<std::int64_t>(key.precision), key.tuner_version,
                         key.model_version);
  }

  // By raw column values, so that a row whose columns do not decode can still be deleted.
  bool erase_columns(const std::string& fingerprint, const std::string& device,
                     std::int64_t precision, std::int64_t tuner_version,
                     std::int64_t model_version) {
    sqlite3_stmt* s = erase_plan_.get();
    ResetOnExit reset(s);
    bind_key_columns(s, fingerprint, device, precision, tuner_version, model_version);
    const int rc = first_step(s, "erase plan");
    if (rc != SQLITE_DONE) fail(rc, "erase plan fingerprint=" + fingerprint);
    return sqlite3_changes(db_) > 0;
  }

  void bind_key(sqlite3_stmt* s, const PlanKey& key) {
    bind_key_columns(s, key.fingerprint.hex(), key.device_signature,
                     static_cast<std::int64_t>(key.precision), key.tuner_version,
                     key.model_version);
  }

  // ?1..?5 in kPlanKeyColumns order.
  void bind_key_columns(sqlite3_stmt* s, const std::string& fingerprint, const std::string& device,
                        std::int64_t precision, std::int64_t tuner_version,
                        std::int64_t model_version) {
    bind_text(s, 1, fingerprint);
    bind_text(s, 2, device);
    bind_int64(s, 3, precision);
    bind_int64(s, 4, tuner_version);
    bind_int64(s, 5, model_version);
  }

  // ---- SQLite plumbing ----

  StatementPtr prepare(const std::string& sql) {
    // Preparing reads the schema, which can be busy too while another connection migrates.
    for (std::uint32_t attempt = 0;; ++attempt) {
      sqlite3_stmt* statement = nullptr;
      const int rc = sqlite3_prepare_v3(db_, sql.c_str(), static_cast<int>(sql.size() + 1),
                                        SQLITE_PREPARE_PERSISTENT, &statement, nullptr);
      if (rc == SQLITE_OK) return StatementPtr(statement);
      if (!is_busy(rc) || attempt >= options_.busy_retries) fail(rc, "prepare \"" + sql + "\"");
      back_off(attempt);
    }
  }

  static void back_off(std::uint32_t attempt) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10 << std::min(attempt, 6u)));
  }

  void bind_text(sqlite3_stmt* s, int index, std::string_view text) {
    check_bind(
        sqlite3_bind_text(s, index, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT));
  }
  void bind_int64(sqlite3_stmt* s, int index, std::int64_t value) {
    check_bind(sqlite3_bind_int64(s, index, value));
  }
  void bind_double(sqlite3_stmt* s, int index, double value) {
    check_bind(sqlite3_bind_double(s, index, value));
  }
  void check_bind(int rc) {
    if (rc != SQLITE_OK) fail(rc, "bind parameter");
  }

  // The first step of a statement, retried when another connection holds the lock past the
  // busy timeout (or busy is returned at once, as for a read-to-write upgrade in WAL mode).
  // Only the first step: a busy error can only come from taking the lock, before any row.
  int first_step(sqlite3_stmt* s, std::string_view what) {
    for (std::uint32_t attempt = 0;; ++attempt) {
      const int rc = sqlite3_step(s);
      if (!is_busy(rc) || attempt >= options_.busy_retries) return rc;
      spdlog::debug("plan store '{}': {} busy, retry {} of {}", options_.path, what, attempt + 1,
                    options_.busy_retries);
      sqlite3_reset(s);
      back_off(attempt);
    }
  }

  void exec(const char* sql, const std::string& what) {
    for (std::uint32_t attempt = 0;; ++attempt) {
      char* message = nullptr;
      const int rc = sqlite3_exec(db_, sql, nullptr, nullptr, &message);
      const std::string reason = message != nullptr ? message : sqlite3_errstr(rc);
      sqlite3_free(message);
      if (rc == SQLITE_OK) return;
      if (!is_busy(rc) || attempt >= options_.busy_retries) fail(rc, what, reason);
      back_off(attempt);
    }
  }

  std::string query_text(const std::string& sql) {
    StatementPtr s = prepare(sql);
    const int rc = first_step(s.get(), sql);
    if (rc != SQLITE_ROW) fail(rc, sql);
    return column_text(s.get(), 0);
  }

  [[noreturn]] void fail(int rc, const std::string& what) { fail(rc, what, sqlite3_errmsg(db_)); }
  [[noreturn]] void fail(int rc, const std::string& what, const std::string& reason) {
    // errmsg often repeats errstr; the generic text is only worth adding when it differs.
    const std::string generic = sqlite3_errstr(rc);
    throw Error(error_code_for(rc), "plan store '" + options_.path + "': " + what + ": " + reason +
                                        (reason == generic ? "" : " (" + generic + ")"));
  }

  SqlitePlanStoreOptions options_;
  const SqlText sql_;
  std::mutex mutex_;  // one connection, one statement at a time
  sqlite3* db_ = nullptr;
  StatementPtr find_plan_, upsert_plan_, insert_partition_, erase_partition_, erase_plan_,
      list_plans_, erase_device_, upsert_calibration_, find_calibration_, list_calibrations_,
      insert_sample_, trim_samples_, list_samples_, erase_sample_;
};

SqlitePlanStore::SqlitePlanStore(SqlitePlanStoreOptions options)
    : impl_(std::make_unique<Impl>(std::move(options))) {}
SqlitePlanStore::~SqlitePlanStore() = default;

std::optional<Plan> SqlitePlanStore::find(const PlanKey& key) { return impl_->find(key); }
void SqlitePlanStore::put(const PlanKey& key, const Plan& plan) { impl_->put(key, plan); }
bool SqlitePlanStore::erase(const PlanKey& key) { return impl_->erase(key); }
std::vector<StoredPlan> SqlitePlanStore::list(std::size_t limit) { return impl_->list(limit); }
std::size_t SqlitePlanStore::erase_all_for_device(const std::string& device_signature) {
  return impl_->erase_all_for_device(device_signature);
}
void SqlitePlanStore::put_calibration(const std::string& device_signature,
                                      std::uint32_t model_version, const std::string& model_json) {
  impl_->put_calibration(device_signature, model_version, model_json);
}
std::optional<std::string> SqlitePlanStore::find_calibration(const std::string& device_signature,
                                                             std::uint32_t model_version) {
  return impl_->find_calibration(device_signature, model_version);
}
std::vector<StoredCalibration> SqlitePlanStore::list_calibrations() {
  return impl_->list_calibrations();
}
void SqlitePlanStore::put_samples(const std::vector<MeasurementSample>& samples,
                                  std::size_t keep_per_format) {
  impl_->put_samples(samples, keep_per_format);
}
std::vector<MeasurementSample> SqlitePlanStore::list_samples(const std::string& device_signature,
                                                             Precision precision) {
  return impl_->list_samples(device_signature, precision);
}
int SqlitePlanStore::schema_version() { return impl_->schema_version(); }

}  // namespace spmvd
