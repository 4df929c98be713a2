#include "db/sqlite_outbox.hpp"

#include <spdlog/spdlog.h>
#include <sqlite3.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <mutex>
#include <thread>

#include "core/error.hpp"
#include "db/plan_sql.hpp"

namespace spmvd {
namespace {

// How often a statement that is still busy after the busy timeout is tried again.
constexpr int kBusyRetries = 3;

bool is_busy(int rc) { return (rc & 0xff) == SQLITE_BUSY || (rc & 0xff) == SQLITE_LOCKED; }

// A value that binds and reads back: either an integer or text.
struct Value {
  std::int64_t integer = 0;
  std::string text;
  bool is_text = false;
};
Value integer(std::int64_t v) { return Value{.integer = v, .text = {}, .is_text = false}; }
Value text(std::string v) { return Value{.integer = 0, .text = std::move(v), .is_text = true}; }

}  // namespace

class SqliteOutbox::Impl {
 public:
  Impl(std::string path, std::uint32_t busy_timeout_ms) : path_(std::move(path)) {
    const int rc =
        sqlite3_open_v2(path_.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nullptr);
    if (rc != SQLITE_OK) {
      const std::string reason = db_ != nullptr ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
      sqlite3_close_v2(db_);
      db_ = nullptr;
      throw Error(ErrorCode::unavailable,
                  "plan store outbox: cannot open SQLite database '" + path_ + "': " + reason);
    }
    sqlite3_busy_timeout(db_, static_cast<int>(std::min<std::uint32_t>(
                                  busy_timeout_ms, std::numeric_limits<int>::max())));
    const auto tables = query(
        "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name IN"
        " ('cluster_outbox_plans', 'cluster_outbox_calibrations')",
        {}, 1);
    if (tables.empty() || tables[0][0].integer != 2) {
      sqlite3_close_v2(db_);
      db_ = nullptr;
      throw Error(ErrorCode::failed_precondition,
                  "plan store outbox: SQLite database '" + path_ +
                      "' has no outbox tables; open it with SqlitePlanStore first (migrates it)");
    }
  }
  ~Impl() {
    if (db_ != nullptr) sqlite3_close_v2(db_);
  }
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;

  void queue_plan(const PlanKey& key) {
    // OR REPLACE deletes the old entry of the key and inserts a new one: a new id.
    query(
        "INSERT OR REPLACE INTO cluster_outbox_plans (fingerprint, device, precision,"
        " tuner_version, model_version, queued_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        {text(key.fingerprint.hex()), text(key.device_signature),
         integer(static_cast<std::int64_t>(key.precision)), integer(key.tuner_version),
         integer(key.model_version), integer(now_unix_ms())},
        0);
  }

  void queue_calibration(const std::string& device, std::uint32_t model_version) {
    query(
        "INSERT OR REPLACE INTO cluster_outbox_calibrations (device, model_version, queued_ms)"
        " VALUES (?1, ?2, ?3)",
        {text(device), integer(model_version), integer(now_unix_ms())}, 0);
  }

  std::vector<OutboxPlan> plans(std::size_t limit) {
    const auto rows = query(
        "SELECT id, fingerprint, device, precision, tuner_version, model_version"
        " FROM cluster_outbox_plans ORDER BY id LIMIT ?1",
        {integer(clamp(limit))}, 6);
    std::vector<OutboxPlan> entries;
    for (const auto& row : rows) {
      const auto fingerprint = fingerprint_from_hex(row[1].text);
      const std::int64_t precision = row[3].integer;
      const bool sound = fingerprint &&
                         (precision == static_cast<std::int64_t>(Precision::fp32) ||
                          precision == static_cast<std::int64_t>(Precision::fp64)) &&
                         fits_u32(row[4].integer) && fits_u32(row[5].integer);
      if (!sound) {
        spdlog::warn(
            "plan store outbox '{}': dropping entry {} (fingerprint '{}' device '{}'): "
            "its key columns do not decode",
            path_, row[0].integer, row[1].text, row[2].text);
        remove_plan(row[0].integer);
        continue;
      }
      entries.push_back(
          OutboxPlan{.id = row[0].integer,
                     .key = PlanKey{*fingerprint, row[2].text, static_cast<Precision>(precision),
                                    static_cast<std::uint32_t>(row[4].integer),
                                    static_cast<std::uint32_t>(row[5].integer)}});
    }
    return entries;
  }

  std::vector<OutboxCalibration> calibrations(std::size_t limit) {
    const auto rows = query(
        "SELECT id, device, model_version FROM cluster_outbox_calibrations ORDER BY id LIMIT ?1",
        {integer(clamp(limit))}, 3);
    std::vector<OutboxCalibration> entries;
    for (const auto& row : rows) {
      if (!fits_u32(row[2].integer)) {
        remove_calibration(row[0].integer);
        continue;
      }
      entries.push_back(
          OutboxCalibration{.id = row[0].integer,
                            .device_signature = row[1].text,
                            .model_version = static_cast<std::uint32_t>(row[2].integer)});
    }
    return entries;
  }

  void remove_plan(std::int64_t id) {
    query("DELETE FROM cluster_outbox_plans WHERE id = ?1", {integer(id)}, 0);
  }
  void remove_calibration(std::int64_t id) {
    query("DELETE FROM cluster_outbox_calibrations WHERE id = ?1", {integer(id)}, 0);
  }
  void discard_plan(const PlanKey& key) {
    query(
        "DELETE FROM cluster_outbox_plans WHERE fingerprint = ?1 AND device = ?2 AND"
        " precision = ?3 AND tuner_version = ?4 AND model_version = ?5",
        {text(key.fingerprint.hex()), text(key.device_signature),
         integer(static_cast<std::int64_t>(key.precision)), integer(key.tuner_version),
         integer(key.model_version)},
        0);
  }
  void discard_device(const std::string& device) {
    query("DELETE FROM cluster_outbox_plans WHERE device = ?1", {text(device)}, 0);
  }

  std::size_t size() {
    const auto rows = query(
        "SELECT (SELECT COUNT(*) FROM cluster_outbox_plans) +"
        " (SELECT COUNT(*) FROM cluster_outbox_calibrations)",
        {}, 1);
    return static_cast<std::size_t>(rows.at(0)[0].integer);
  }

 private:
  static bool fits_u32(std::int64_t v) {
    return v >= 0 && v <= std::numeric_limits<std::uint32_t>::max();
  }
  static std::int64_t clamp(std::size_t limit) {
    return static_cast<std::int64_t>(
        std::min<std::size_t>(limit, std::numeric_limits<std::int64_t>::max()));
  }

  // Runs one statement with bound parameters and returns its rows (columns read as integers
  // or text as they are typed in the table). Few statements at a low rate: preparing each
  // time costs less than keeping a cache of them right.
  std::vector<std::vector<Value>> query(const std::string& sql, const std::vector<Value>& params,
                                        int columns) {
    std::lock_guard lock(mutex_);
    for (int attempt = 0;; ++attempt) {
      sqlite3_stmt* s = nullptr;
      int rc = sqlite3_prepare_v2(db_, sql.c_str(), -1, &s, nullptr);
      std::vector<std::vector<Value>> rows;
      if (rc == SQLITE_OK) {
        for (std::size_t i = 0; i < params.size(); ++i) {
          const int index = static_cast<int>(i + 1);
          if (params[i].is_text) {
            sqlite3_bind_text(s, index, params[i].text.data(),
                              static_cast<int>(params[i].text.size()), SQLITE_TRANSIENT);
          } else {
            sqlite3_bind_int64(s, index, params[i].integer);
          }
        }
        while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
          std::vector<Value> row;
          for (int c = 0; c < columns; ++c) {
            if (sqlite3_column_type(s, c) == SQLITE_TEXT) {
              const auto* t = reinterpret_cast<const char*>(sqlite3_column_text(s, c));
              row.push_back(
                  text(std::string(t, static_cast<std::size_t>(sqlite3_column_bytes(s, c)))));
            } else {
              row.push_back(integer(sqlite3_column_int64(s, c)));
            }
          }
          rows.push_back(std::move(row));
        }
      }
      const std::string reason = sqlite3_errmsg(db_);
      sqlite3_finalize(s);
      if (rc == SQLITE_DONE) return rows;
      if (!is_busy(rc) || attempt >= kBusyRetries) {
        throw Error(
            (rc & 0xff) == SQLITE_FULL ? ErrorCode::resource_exhausted : ErrorCode::unavailable,
            "plan store outbox '" + path_ + "': \"" + sql + "\": " + reason);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10 << attempt));
    }
  }

  const std::string path_;
  std::mutex mutex_;
  sqlite3* db_ = nullptr;
};

SqliteOutbox::SqliteOutbox(std::string path, std::uint32_t busy_timeout_ms)
    : impl_(std::make_unique<Impl>(std::move(path), busy_timeout_ms)) {}
SqliteOutbox::~SqliteOutbox() = default;

void SqliteOutbox::queue_plan(const PlanKey& key) { impl_->queue_plan(key); }
void SqliteOutbox::queue_calibration(const std::string& device_signature,
                                     std::uint32_t model_version) {
  impl_->queue_calibration(device_signature, model_version);
}
std::vector<OutboxPlan> SqliteOutbox::plans(std::size_t limit) { return impl_->plans(limit); }
std::vector<OutboxCalibration> SqliteOutbox::calibrations(std::size_t limit) {
  return impl_->calibrations(limit);
}
void SqliteOutbox::remove_plan(std::int64_t id) { impl_->remove_plan(id); }
void SqliteOutbox::remove_calibration(std::int64_t id) { impl_->remove_calibration(id); }
void SqliteOutbox::discard_plan(const PlanKey& key) { impl_->discard_plan(key); }
void SqliteOutbox::discard_device(const std::string& device_signature) {
  impl_->discard_device(device_signature);
}
std::size_t SqliteOutbox::size() { return impl_->size(); }

}  // namespace spmvd
