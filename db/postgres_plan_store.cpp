#include "db/postgres_plan_store.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <chrono>
#include <condition_variable>
#include <limits>
#include <mutex>
#include <set>
#include <tuple>
#include <pqxx/pqxx>
#include <string_view>
#include <type_traits>
#include <variant>

#include "core/error.hpp"
#include "db/plan_row.hpp"
#include "db/plan_sql.hpp"
#include "db/postgres_migrations.hpp"
#include "db/sample_row.hpp"

namespace spmvd {
namespace {

// ---- All SQL of this backend; the plans table's is generated from its columns (plan_sql.hpp) --
// The key columns are bound as $1..$5 in kPlanKeyColumns order (key_params).

// Prepared on every connection of the pool, by name.
const std::array<std::pair<const char*, std::string>, 14>& prepared_statements() {
  static const std::array<std::pair<const char*, std::string>, 14> statements{{
      {"find_plan", find_plan_sql(kPostgresDialect)},
      {"upsert_plan", upsert_plan_sql(kPostgresDialect)},
      {"insert_partition", insert_partition_sql(kPostgresDialect)},
      {"erase_partition", erase_partition_sql(kPostgresDialect)},
      {"erase_plan", "DELETE FROM plans WHERE " + plan_key_predicate(kPostgresDialect)},
      {"list_plans", "SELECT " + plan_key_columns() +
                         ", plan_json, format_id, created_ms, updated_ms FROM plans"
                         " ORDER BY updated_ms DESC LIMIT $1"},
      {"erase_device", "DELETE FROM plans WHERE device = $1"},
      {"upsert_calibration",
       "INSERT INTO calibrations (device, model_version, model_json, created_ms)"
       " VALUES ($1, $2, $3, $4) ON CONFLICT (device, model_version) DO UPDATE SET"
       " model_json = EXCLUDED.model_json, created_ms = EXCLUDED.created_ms"},
      {"find_calibration",
       "SELECT model_json FROM calibrations WHERE device = $1 AND model_version = $2"},
      {"list_calibrations",
       "SELECT device, model_version, model_json, created_ms FROM calibrations"
       " ORDER BY device, model_version"},
      {"insert_sample", insert_sample_sql(kPostgresDialect)},
      {"trim_samples", trim_samples_sql(kPostgresDialect)},
      {"list_samples", list_samples_sql(kPostgresDialect)},
      {"erase_sample", erase_sample_sql(kPostgresDialect)},
  }};
  return statements;
}

// Serialises the migrations of all daemons that open one database at once
// (pg_advisory_xact_lock's key space is per database; "spmvd" in ASCII).
constexpr std::string_view kMigrationLockKey = "495891117668";

// Shortest text that reads back as the same double: the winner rule compares measured_ms, so
// PostgreSQL must hold exactly the value SQLite holds.
std::string exact_double(double value) {
  std::array<char, 32> buffer{};
  const auto result = std::to_chars(buffer.data(), buffer.data() + buffer.size(), value);
  return std::string(buffer.data(), result.ptr);
}

// libpq's messages end with a newline (and sometimes a second line); logs want one line.
std::string one_line(std::string_view text) {
  std::string line(text);
  for (char& c : line) {
    if (c == '\n' || c == '\t') c = ' ';
  }
  const auto doubled = [](char a, char b) { return a == ' ' && b == ' '; };
  line.erase(std::unique(line.begin(), line.end(), doubled), line.end());
  while (!line.empty() && line.back() == ' ') line.pop_back();
  return line;
}

// SQLSTATE classes after which the server or the link is what failed, not the statement:
// 08 connection exception, 53 insufficient resources, 57 operator intervention (statement
// timeout 57014, shutdown 57P01-57P03), 40 transaction rollback.
bool is_unavailable_state(const std::string& state) {
  const std::string_view cls = std::string_view(state).substr(0, 2);
  return cls == "08" || cls == "53" || cls == "57" || cls == "40";
}

// The states after which the connection itself is gone.
bool is_connection_lost_state(const std::string& state) {
  return state.rfind("08", 0) == 0 || state.rfind("57P0", 0) == 0;
}

std::string connection_string(const PostgresPlanStoreOptions& options) {
  std::string url = options.url;
  if (url.find("connect_timeout=") == std::string::npos) {
    url += (url.find('?') == std::string::npos ? "?" : "&");
    url += "connect_timeout=" + std::to_string(options.connect_timeout_s);
  }
  return url;
}

}  // namespace

std::string redact_url_password(const std::string& url) {
  std::string out = url;
  const std::size_t scheme = out.find("://");
  if (scheme != std::string::npos) {
    const std::size_t authority = scheme + 3;
    const std::size_t end = out.find_first_of("/?", authority);
    const std::size_t at = out.rfind('@', end == std::string::npos ? out.size() : end);
    if (at != std::string::npos && at >= authority) {
      const std::size_t colon = out.find(':', authority);
      if (colon != std::string::npos && colon < at) out.replace(colon + 1, at - colon - 1, "***");
    }
  }
  const std::size_t password = out.find("password=");
  if (password != std::string::npos) {
    const std::size_t value = password + 9;
    const std::size_t end = out.find('&', value);
    out.replace(value, (end == std::string::npos ? out.size() : end) - value, "***");
  }
  return out;
}

// ---- the store -------------------------------------------------------------------------------

class PostgresPlanStore::Impl {
 public:
  explicit Impl(PostgresPlanStoreOptions options)
      : options_(std::move(options)),
        conninfo_(connection_string(options_)),
        shown_url_(redact_url_password(options_.url)) {
    if (options_.pool_size == 0) options_.pool_size = 1;
    migrate();
  }

  std::optional<Plan> find(const PlanKey& key) {
    struct FoundRow {
      std::string plan_json;
      std::int64_t format_id = 0;
      std::optional<std::string> partition_kind;  // NULL: the plan has no partition
      std::int64_t entry_count = 0;
      std::string entries;
    };
    const auto row = run("find plan " + to_string(key), [&](pqxx::connection& c) {
      pqxx::nontransaction t(c);
      const pqxx::result r = exec_by_key(t, "find_plan", key);
      std::optional<FoundRow> found;
      if (r.empty()) return found;
      found.emplace(FoundRow{r[0][0].as<std::string>(), r[0][1].as<std::int64_t>()});
      if (!r[0][2].is_null()) {
        found->partition_kind = r[0][2].as<std::string>();
        found->entry_count = r[0][3].as<std::int64_t>();
        found->entries = pqxx::binarystring(r[0][4]).str();
      }
      return found;
    });
    if (!row) return std::nullopt;
    std::string problem;
    std::optional<Plan> plan;
    try {
      plan = plan_from_json(row->plan_json);
      problem = plan_row_problem(key, *plan, row->format_id);
      if (row->partition_kind)
        plan->partition = std::make_shared<const PlanPartition>(
            PlanPartition{*row->partition_kind, partition_entries(row->entries, row->entry_count)});
    } catch (const Error& e) {
      problem = e.what();
    }
    if (problem.empty()) return plan;
    spdlog::warn("plan store {}: dropping stored plan {}: {}", shown_url_, to_string(key), problem);
    erase(key);
    return std::nullopt;
  }

  void put(const PlanKey& key, const Plan& plan) {
    if (plan.precision != key.precision || plan.tuner_version != key.tuner_version) {
      throw_invalid("plan store: plan (precision " + std::string(to_string(plan.precision)) +
                    ", tuner_version " + std::to_string(plan.tuner_version) +
                    ") does not match its key " + to_string(key));
    }
    const std::string json = plan_to_json(plan);
    const std::string measured_ms = exact_double(plan.measured_ms);
    const std::int64_t now_ms = now_unix_ms();
    std::optional<pqxx::binarystring> entries;
    if (plan.partition) entries.emplace(partition_blob(plan.partition->entries));
    run("put plan " + to_string(key), [&](pqxx::connection& c) {
      // One transaction: the plan and its partition (plan_sql.hpp) are stored together or not.
      pqxx::work t(c);
      const pqxx::result upserted = t.exec_prepared(
          "upsert_plan", key.fingerprint.hex(), key.device_signature,
          static_cast<std::int64_t>(key.precision), static_cast<std::int64_t>(key.tuner_version),
          static_cast<std::int64_t>(key.model_version),
          static_cast<std::int64_t>(plan.format.value), plan.format_name, json, measured_ms, now_ms,
          std::string(to_string(plan.tuning.mode)), exact_double(plan.tuning.cost.total_ms),
          exact_double(plan.tuning_spmv_equivalents()), now_ms);
      // This plan won: the one it replaced had its partition.
      if (upserted.affected_rows() > 0) exec_by_key(t, "erase_partition", key);
      if (plan.partition)
        t.exec_prepared("insert_partition", key.fingerprint.hex(), key.device_signature,
                        static_cast<std::int64_t>(key.precision),
                        static_cast<std::int64_t>(key.tuner_version),
                        static_cast<std::int64_t>(key.model_version), plan.partition->kind,
                        static_cast<std::int64_t>(plan.partition->entries.size()), *entries, json);
      t.commit();
      return true;
    });
  }

  bool erase(const PlanKey& key) {
    return run("erase plan " + to_string(key), [&](pqxx::connection& c) {
      pqxx::nontransaction t(c);
      return exec_by_key(t, "erase_plan", key).affected_rows() > 0;
    });
  }

  std::vector<StoredPlan> list(std::size_t limit) {
    const auto max = static_cast<std::size_t>(std::numeric_limits<std::int64_t>::max());
    const auto rows = run("list plans", [&](pqxx::connection& c) {
      pqxx::nontransaction t(c);
      const pqxx::result r =
          t.exec_prepared("list_plans", static_cast<std::int64_t>(std::min(limit, max)));
      std::vector<PlanRow> rows;
      rows.reserve(r.size());
      for (const pqxx::row& f : r) {
        rows.push_back(PlanRow{.fingerprint = f[0].as<std::string>(),
                               .device = f[1].as<std::string>(),
                               .precision = f[2].as<std::int64_t>(),
                               .tuner_version = f[3].as<std::int64_t>(),
                               .model_version = f[4].as<std::int64_t>(),
                               .format_id = f[6].as<std::int64_t>(),
                               .plan_json = f[5].as<std::string>(),
                               .created_ms = f[7].as<std::int64_t>(),
                               .updated_ms = f[8].as<std::int64_t>()});
      }
      return rows;
    });
    std::vector<StoredPlan> plans;
    for (const PlanRow& row : rows) {
      auto decoded = decode_plan_row(row);
      if (auto* stored = std::get_if<StoredPlan>(&decoded)) {
        plans.push_back(std::move(*stored));
        continue;
      }
      spdlog::warn("plan store {}: dropping stored plan {}: {}", shown_url_, describe_plan_row(row),
                   std::get<std::string>(decoded));
      run("erase plan " + describe_plan_row(row), [&](pqxx::connection& c) {
        pqxx::nontransaction t(c);
        t.exec_prepared("erase_plan", row.fingerprint, row.device, row.precision, row.tuner_version,
                        row.model_version);
        return true;
      });
    }
    return plans;
  }

  std::size_t erase_all_for_device(const std::string& device_signature) {
    return run("erase plans of device '" + device_signature + "'", [&](pqxx::connection& c) {
      pqxx::nontransaction t(c);
      return static_cast<std::size_t>(
          t.exec_prepared("erase_device", device_signature).affected_rows());
    });
  }

  void put_calibration(const std::string& device_signature, std::uint32_t model_version,
                       const std::string& model_json) {
    const std::int64_t now_ms = now_unix_ms();
    run("put calibration of device '" + device_signature + "' model version " +
            std::to_string(model_version),
        [&](pqxx::connection& c) {
          pqxx::nontransaction t(c);
          t.exec_prepared("upsert_calibration", device_signature,
                          static_cast<std::int64_t>(model_version), model_json, now_ms);
          return true;
        });
  }

  std::optional<std::string> find_calibration(const std::string& device_signature,
                                              std::uint32_t model_version) {
    return run("find calibration of device '" + device_signature + "' model version " +
                   std::to_string(model_version),
               [&](pqxx::connection& c) {
                 pqxx::nontransaction t(c);
                 const pqxx::result r = t.exec_prepared("find_calibration", device_signature,
                                                        static_cast<std::int64_t>(model_version));
                 std::optional<std::string> json;
                 if (!r.empty()) json = r[0][0].as<std::string>();
                 return json;
               });
  }

  std::vector<StoredCalibration> list_calibrations() {
    return run("list calibrations", [&](pqxx::connection& c) {
      pqxx::nontransaction t(c);
      std::vector<StoredCalibration> calibrations;
      for (const pqxx::row& f : t.exec_prepared("list_calibrations")) {
        calibrations.push_back(StoredCalibration{
            .device_signature = f[0].as<std::string>(),
            .model_version = static_cast<std::uint32_t>(f[1].as<std::int64_t>()),
            .model_json = f[2].as<std::string>(),
            .created_ms = f[3].as<std::int64_t>(),
        });
      }
      return calibrations;
    });
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
    run("put " + std::to_string(rows.size()) + " samples", [&](pqxx::connection& c) {
      // One transaction, as SQLite's: no reader sees the samples untrimmed.
      pqxx::work t(c);
      for (const SampleRow& row : rows) {
        t.exec_prepared("insert_sample", row.device, row.precision, row.format_id,
                        row.fingerprint, row.tuned_ms, row.model_version,
                        exact_double(row.predicted_ms), exact_double(row.measured_ms),
                        row.sample_json, row.recorded_ms);
      }
      for (const auto& [device, precision, format_id] : owners)
        t.exec_prepared("trim_samples", device, precision, format_id, keep);
      t.commit();
      return true;
    });
  }

  std::vector<MeasurementSample> list_samples(const std::string& device_signature,
                                              Precision precision) {
    const auto rows = run("list samples of device '" + device_signature + "'",
                          [&](pqxx::connection& c) {
                            pqxx::nontransaction t(c);
                            std::vector<SampleRow> rows;
                            for (const pqxx::row& f :
                                 t.exec_prepared("list_samples", device_signature,
                                                 static_cast<std::int64_t>(precision))) {
                              rows.push_back(SampleRow{
                                  .id = f[0].as<std::int64_t>(),
                                  .device = f[1].as<std::string>(),
                                  .precision = f[2].as<std::int64_t>(),
                                  .format_id = f[3].as<std::int64_t>(),
                                  .fingerprint = f[4].as<std::string>(),
                                  .tuned_ms = f[5].as<std::int64_t>(),
                                  .model_version = f[6].as<std::int64_t>(),
                                  .predicted_ms = f[7].as<double>(),
                                  .measured_ms = f[8].as<double>(),
                                  .sample_json = f[9].as<std::string>(),
                                  .recorded_ms = f[10].as<std::int64_t>()});
                            }
                            return rows;
                          });
    std::vector<MeasurementSample> samples;
    for (const SampleRow& row : rows) {
      auto decoded = decode_sample_row(row);
      if (auto* sample = std::get_if<MeasurementSample>(&decoded)) {
        samples.push_back(std::move(*sample));
        continue;
      }
      spdlog::warn("plan store {}: dropping stored sample {}: {}", shown_url_, row.id,
                   std::get<std::string>(decoded));
      run("erase sample " + std::to_string(row.id), [&](pqxx::connection& c) {
        pqxx::nontransaction t(c);
        t.exec_prepared("erase_sample", row.id);
        return true;
      });
    }
    return samples;
  }

  int schema_version() {
    return run("read schema version", [&](pqxx::connection& c) {
      pqxx::nontransaction t(c);
      return t.exec1("SELECT COALESCE(MAX(version), 0) FROM schema_version")[0].as<int>();
    });
  }

 private:
  // ---- migrations ----

  void migrate() {
    const auto migrations = postgres_migrations();
    const int latest = postgres_latest_schema_version();
    run("migrate the schema", [&](pqxx::connection& c) {
      pqxx::work t(c);
      t.exec("SELECT pg_advisory_xact_lock(" + std::string(kMigrationLockKey) + ")");
      t.exec(
          "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY,"
          " description TEXT NOT NULL, applied_ms BIGINT NOT NULL)");
      const int current =
          t.exec1("SELECT COALESCE(MAX(version), 0) FROM schema_version")[0].as<int>();
      if (current > latest) {
        throw Error(ErrorCode::failed_precondition,
                    "plan store: PostgreSQL database " + shown_url_ + " has schema version " +
                        std::to_string(current) + ", newer than the " + std::to_string(latest) +
                        " this binary knows; upgrade spmvd or use another database");
      }
      for (const SchemaMigration& step : migrations) {
        if (step.version <= current) continue;
        t.exec(step.sql);
        t.exec_params(
            "INSERT INTO schema_version (version, description, applied_ms)"
            " VALUES ($1, $2, $3)",
            step.version, std::string(step.description), now_unix_ms());
        spdlog::info("plan store {}: applied schema migration {} ({})", shown_url_, step.version,
                     step.description);
      }
      t.commit();
      return true;
    });
  }

  static pqxx::result exec_by_key(pqxx::transaction_base& t, const char* statement,
                                  const PlanKey& key) {
    return t.exec_prepared(statement, key.fingerprint.hex(), key.device_signature,
                           static_cast<std::int64_t>(key.precision),
                           static_cast<std::int64_t>(key.tuner_version),
                           static_cast<std::int64_t>(key.model_version));
  }

  // ---- the connection pool ----

  struct Lease {
    std::unique_ptr<pqxx::connection> connection;
    bool reused = false;  // came from the pool (may have died since) rather than fresh
  };

  Lease acquire() {
    {
      std::unique_lock lock(pool_mutex_);
      pool_free_.wait(lock, [&] { return !idle_.empty() || open_ < options_.pool_size; });
      if (!idle_.empty()) {
        Lease lease{std::move(idle_.back()), true};
        idle_.pop_back();
        return lease;
      }
      ++open_;
    }
    try {
      return Lease{connect(), false};
    } catch (...) {
      forget_connection();
      throw;
    }
  }

  void give_back(Lease& lease) {
    std::lock_guard lock(pool_mutex_);
    if (lease.connection->is_open()) {
      idle_.push_back(std::move(lease.connection));
    } else {
      --open_;
    }
    pool_free_.notify_one();
  }

  void forget_connection() {
    std::lock_guard lock(pool_mutex_);
    --open_;
    pool_free_.notify_one();
  }

  // After one connection was found dead the idle ones most likely are too (a server restart
  // ends them all): closing them now spares each caller a failed first attempt.
  void drop_idle() {
    std::lock_guard lock(pool_mutex_);
    open_ -= idle_.size();
    idle_.clear();
    pool_free_.notify_all();
  }

  std::unique_ptr<pqxx::connection> connect() {
    try {
      auto connection = std::make_unique<pqxx::connection>(conninfo_);
      pqxx::nontransaction(*connection)
          .exec("SET statement_timeout = " + std::to_string(options_.statement_timeout_ms));
      for (const auto& [name, sql] : prepared_statements()) connection->prepare(name, sql);
      return connection;
    } catch (const pqxx::failure& e) {
      throw Error(ErrorCode::unavailable, "plan store: cannot connect to PostgreSQL " + shown_url_ +
                                              ": " + one_line(e.what()));
    }
  }

  // Runs body(connection) on a pooled connection and maps libpqxx's exceptions to Error. A
  // connection found dead is retried once on a fresh one (see the class comment).
  template <typename Body>
  auto run(const std::string& what, Body&& body) -> std::invoke_result_t<Body&, pqxx::connection&> {
    for (int attempt = 0;; ++attempt) {
      Lease lease = acquire();
      std::string reason;
      bool connection_lost = false;
      try {
        auto result = body(*lease.connection);
        give_back(lease);
        return result;
      } catch (const pqxx::broken_connection& e) {
        connection_lost = true;
        reason = one_line(e.what());
      } catch (const pqxx::sql_error& e) {
        if (is_connection_lost_state(e.sqlstate())) {
          connection_lost = true;
          reason = one_line(e.what());
        } else {
          give_back(lease);
          throw Error(
              is_unavailable_state(e.sqlstate()) ? ErrorCode::unavailable : ErrorCode::internal,
              "plan store " + shown_url_ + ": " + what + ": " + one_line(e.what()) + " (SQLSTATE " +
                  e.sqlstate() + ")");
        }
      } catch (const pqxx::failure& e) {
        // in_doubt_error, transaction_rollback: the server, not the request, is the problem.
        give_back(lease);
        throw Error(ErrorCode::unavailable,
                    "plan store " + shown_url_ + ": " + what + ": " + one_line(e.what()));
      } catch (...) {
        give_back(lease);
        throw;
      }
      // The connection is gone: never return it to the pool.
      lease.connection.reset();
      forget_connection();
      drop_idle();
      if (connection_lost && lease.reused && attempt == 0) {
        spdlog::debug("plan store {}: {}: pooled connection lost ({}); retrying on a new one",
                      shown_url_, what, reason);
        continue;
      }
      throw Error(ErrorCode::unavailable,
                  "plan store " + shown_url_ + ": " + what + ": connection lost: " + reason);
    }
  }

  PostgresPlanStoreOptions options_;
  const std::string conninfo_;
  const std::string shown_url_;
  std::mutex pool_mutex_;
  std::condition_variable pool_free_;
  std::vector<std::unique_ptr<pqxx::connection>> idle_;
  std::size_t open_ = 0;  // idle plus leased connections
};

PostgresPlanStore::PostgresPlanStore(PostgresPlanStoreOptions options)
    : impl_(std::make_unique<Impl>(std::move(options))) {}
PostgresPlanStore::~PostgresPlanStore() = default;

std::optional<Plan> PostgresPlanStore::find(const PlanKey& key) { return impl_->find(key); }
void PostgresPlanStore::put(const PlanKey& key, const Plan& plan) { impl_->put(key, plan); }
bool PostgresPlanStore::erase(const PlanKey& key) { return impl_->erase(key); }
std::vector<StoredPlan> PostgresPlanStore::list(std::size_t limit) { return impl_->list(limit); }
std::size_t PostgresPlanStore::erase_all_for_device(const std::string& device_signature) {
  return impl_->erase_all_for_device(device_signature);
}
void PostgresPlanStore::put_calibration(const std::string& device_signature,
                                        std::uint32_t model_version,
                                        const std::string& model_json) {
  impl_->put_calibration(device_signature, model_version, model_json);
}
std::optional<std::string> PostgresPlanStore::find_calibration(const std::string& device_signature,
                                                               std::uint32_t model_version) {
  return impl_->find_calibration(device_signature, model_version);
}
std::vector<StoredCalibration> PostgresPlanStore::list_calibrations() {
  return impl_->list_calibrations();
}
void PostgresPlanStore::put_samples(const std::vector<MeasurementSample>& samples,
                                    std::size_t keep_per_format) {
  impl_->put_samples(samples, keep_per_format);
}
std::vector<MeasurementSample> PostgresPlanStore::list_samples(const std::string& device_signature,
                                                               Precision precision) {
  return impl_->list_samples(device_signature, precision);
}
int PostgresPlanStore::schema_version() { return impl_->schema_version(); }

}  // namespace spmvd
