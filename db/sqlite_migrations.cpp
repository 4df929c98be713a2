#include "db/sqlite_migrations.hpp"

#include <array>

namespace spmvd {
namespace {

constexpr std::array kMigrations{
    SqliteMigration{
        1,
        "plans and calibrations",
        // plans: the key columns first (the primary key), then columns duplicated from
        // plan_json so that people and the admin CLI can query without decoding JSON.
        "CREATE TABLE plans ("
        "  fingerprint TEXT NOT NULL,"
        "  device TEXT NOT NULL,"
        "  precision INTEGER NOT NULL,"
        "  tuner_version INTEGER NOT NULL,"
        "  format_id INTEGER NOT NULL,"
        "  format_name TEXT NOT NULL,"
        "  plan_json TEXT NOT NULL,"
        "  measured_ms REAL NOT NULL,"
        "  created_ms INTEGER NOT NULL,"
        "  updated_ms INTEGER NOT NULL,"
        "  PRIMARY KEY (fingerprint, device, precision, tuner_version));"
        // erase_all_for_device and list order by these; the primary key leads with fingerprint.
        "CREATE INDEX plans_by_device ON plans (device);"
        "CREATE INDEX plans_by_updated ON plans (updated_ms);"
        "CREATE TABLE calibrations ("
        "  device TEXT NOT NULL,"
        "  model_version INTEGER NOT NULL,"
        "  model_json TEXT NOT NULL,"
        "  created_ms INTEGER NOT NULL,"
        "  PRIMARY KEY (device, model_version));",
    },
    SqliteMigration{
        2,
        "plans keyed by model version too",
        // The performance models decide which candidates are measured, so a plan belongs to
        // the model version that ranked them (db/plan_key.hpp). SQLite cannot change a primary
        // key in place: the table is rebuilt. Rows of version 1 do not say which models chose
        // them; they are dropped, and their matrices re-tuned once.
        "DROP TABLE plans;"
        "CREATE TABLE plans ("
        "  fingerprint TEXT NOT NULL,"
        "  device TEXT NOT NULL,"
        "  precision INTEGER NOT NULL,"
        "  tuner_version INTEGER NOT NULL,"
        "  model_version INTEGER NOT NULL,"
        "  format_id INTEGER NOT NULL,"
        "  format_name TEXT NOT NULL,"
        "  plan_json TEXT NOT NULL,"
        "  measured_ms REAL NOT NULL,"
        "  created_ms INTEGER NOT NULL,"
        "  updated_ms INTEGER NOT NULL,"
        "  PRIMARY KEY (fingerprint, device, precision, tuner_version, model_version));"
        "CREATE INDEX plans_by_device ON plans (device);"
        "CREATE INDEX plans_by_updated ON plans (updated_ms);",
    },
    SqliteMigration{
        3,
        "cluster outbox",
        // Keys whose local row the cluster store has not received yet (db/sqlite_outbox.hpp).
        // Keys only: the replay pushes whatever the local tier holds then, so the outbox never
        // disagrees with the local row it stands for. Queuing a key again gives it a new id
        // (AUTOINCREMENT never reuses one), so a replay deletes only the entry it delivered.
        "CREATE TABLE cluster_outbox_plans ("
        "  id INTEGER PRIMARY KEY AUTOINCREMENT,"
        "  fingerprint TEXT NOT NULL,"
        "  device TEXT NOT NULL,"
        "  precision INTEGER NOT NULL,"
        "  tuner_version INTEGER NOT NULL,"
        "  model_version INTEGER NOT NULL,"
        "  queued_ms INTEGER NOT NULL,"
        "  UNIQUE (fingerprint, device, precision, tuner_version, model_version));"
        "CREATE TABLE cluster_outbox_calibrations ("
        "  id INTEGER PRIMARY KEY AUTOINCREMENT,"
        "  device TEXT NOT NULL,"
        "  model_version INTEGER NOT NULL,"
        "  queued_ms INTEGER NOT NULL,"
        "  UNIQUE (device, model_version));",
    },
    SqliteMigration{
        4,
        "plans carry their tuning cost",
        // Repeated from plan_json's tuning record for queries (docs/TUNER.md). Rows written
        // before this step were made by tuner version 4 or older, which recorded no cost; they
        // get the defaults and are re-tuned lazily (their tuner version no longer matches).
        "ALTER TABLE plans ADD COLUMN tune_mode TEXT NOT NULL DEFAULT '';"
        "ALTER TABLE plans ADD COLUMN tuning_ms REAL NOT NULL DEFAULT 0;"
        "ALTER TABLE plans ADD COLUMN tuning_spmv_equivalents REAL NOT NULL DEFAULT 0;",
    },
    SqliteMigration{
        5,
        "measured samples",
        // Every candidate a tuning measured (plan_store.hpp MeasurementSample), for the
        // measured refit (docs/TUNER.md "Samples"). sample_json is the candidate, precision,
        // features and times as a plan JSON; the columns repeat what the trim and people query.
        "CREATE TABLE samples ("
        "  id INTEGER PRIMARY KEY AUTOINCREMENT,"
        "  device TEXT NOT NULL,"
        "  precision INTEGER NOT NULL,"
        "  format_id INTEGER NOT NULL,"
        "  fingerprint TEXT NOT NULL,"
        "  tuned_ms INTEGER NOT NULL,"
        "  model_version INTEGER NOT NULL,"
        "  predicted_ms REAL NOT NULL,"
        "  measured_ms REAL NOT NULL,"
        "  sample_json TEXT NOT NULL,"
        "  recorded_ms INTEGER NOT NULL);"
        // The trim keeps the newest of each (device, precision, format); a refit reads one
        // (device, precision).
        "CREATE INDEX samples_by_format ON samples (device, precision, format_id, recorded_ms);",
    },
    SqliteMigration{
        6,
        "plan partitions",
        // The partition or row order a plan's format computed (core/plan_partition.hpp: METIS's
        // parts, an RCM order), so a cache hit does not compute it again: at most one row per
        // plan, same key, written in the plan's put (db/plan_sql.hpp). entries: entry_count
        // little-endian int32. The trigger deletes a plan's partition with the plan on every
        // path that deletes plans (erase, a dropped row, a device's plans).
        "CREATE TABLE plan_partitions ("
        "  fingerprint TEXT NOT NULL,"
        "  device TEXT NOT NULL,"
        "  precision INTEGER NOT NULL,"
        "  tuner_version INTEGER NOT NULL,"
        "  model_version INTEGER NOT NULL,"
        "  kind TEXT NOT NULL,"
        "  entry_count INTEGER NOT NULL,"
        "  entries BLOB NOT NULL,"
        "  PRIMARY KEY (fingerprint, device, precision, tuner_version, model_version));"
        "CREATE TRIGGER plans_delete_partition AFTER DELETE ON plans BEGIN"
        "  DELETE FROM plan_partitions WHERE fingerprint = OLD.fingerprint AND device = OLD.device"
        "  AND precision = OLD.precision AND tuner_version = OLD.tuner_version"
        "  AND model_version = OLD.model_version;"
        " END;",
    },
};

}  // namespace

std::span<const SqliteMigration> sqlite_migrations() noexcept { return kMigrations; }

int sqlite_latest_schema_version() noexcept { return kMigrations.back().version; }

}  // namespace spmvd
