#include "db/postgres_migrations.hpp"

#include <array>

namespace spmvd {
namespace {

constexpr std::array kMigrations{
    SchemaMigration{
        1,
        "plans and calibrations",
        // The key columns first (the primary key), then columns duplicated from plan_json so
        // that people can query without decoding JSON; measured_ms also decides which of two
        // concurrent puts wins (plan_store.hpp).
        "CREATE TABLE plans ("
        "  fingerprint TEXT NOT NULL,"
        "  device TEXT NOT NULL,"
        "  precision INTEGER NOT NULL,"
        "  tuner_version BIGINT NOT NULL,"
        "  model_version BIGINT NOT NULL,"
        "  format_id INTEGER NOT NULL,"
        "  format_name TEXT NOT NULL,"
        "  plan_json TEXT NOT NULL,"
        "  measured_ms DOUBLE PRECISION NOT NULL,"
        "  created_ms BIGINT NOT NULL,"
        "  updated_ms BIGINT NOT NULL,"
        "  PRIMARY KEY (fingerprint, device, precision, tuner_version, model_version));"
        "CREATE INDEX plans_by_device ON plans (device);"
        "CREATE INDEX plans_by_updated ON plans (updated_ms);"
        "CREATE TABLE calibrations ("
        "  device TEXT NOT NULL,"
        "  model_version BIGINT NOT NULL,"
        "  model_json TEXT NOT NULL,"
        "  created_ms BIGINT NOT NULL,"
        "  PRIMARY KEY (device, model_version));",
    },
    SchemaMigration{
        2,
        "plans carry their tuning cost",
        // As SQLite's step 4: repeated from plan_json's tuning record for queries.
        "ALTER TABLE plans ADD COLUMN tune_mode TEXT NOT NULL DEFAULT '';"
        "ALTER TABLE plans ADD COLUMN tuning_ms DOUBLE PRECISION NOT NULL DEFAULT 0;"
        "ALTER TABLE plans ADD COLUMN tuning_spmv_equivalents DOUBLE PRECISION NOT NULL DEFAULT 0;",
    },
    SchemaMigration{
        3,
        "measured samples",
        // As SQLite's step 5: every candidate a tuning measured, for the measured refit.
        "CREATE TABLE samples ("
        "  id BIGSERIAL PRIMARY KEY,"
        "  device TEXT NOT NULL,"
        "  precision INTEGER NOT NULL,"
        "  format_id INTEGER NOT NULL,"
        "  fingerprint TEXT NOT NULL,"
        "  tuned_ms BIGINT NOT NULL,"
        "  model_version BIGINT NOT NULL,"
        "  predicted_ms DOUBLE PRECISION NOT NULL,"
        "  measured_ms DOUBLE PRECISION NOT NULL,"
        "  sample_json TEXT NOT NULL,"
        "  recorded_ms BIGINT NOT NULL);"
        "CREATE INDEX samples_by_format ON samples (device, precision, format_id, recorded_ms);",
    },
    SchemaMigration{
        4,
        "plan partitions",
        // As SQLite's step 6: a plan's partition or row order, deleted with its plan (here by
        // the foreign key's cascade). entries: entry_count little-endian int32.
        "CREATE TABLE plan_partitions ("
        "  fingerprint TEXT NOT NULL,"
        "  device TEXT NOT NULL,"
        "  precision INTEGER NOT NULL,"
        "  tuner_version BIGINT NOT NULL,"
        "  model_version BIGINT NOT NULL,"
        "  kind TEXT NOT NULL,"
        "  entry_count BIGINT NOT NULL,"
        "  entries BYTEA NOT NULL,"
        "  PRIMARY KEY (fingerprint, device, precision, tuner_version, model_version),"
        "  FOREIGN KEY (fingerprint, device, precision, tuner_version, model_version)"
        "    REFERENCES plans (fingerprint, device, precision, tuner_version, model_version)"
        "    ON DELETE CASCADE);",
    },
};

}  // namespace

std::span<const SchemaMigration> postgres_migrations() noexcept { return kMigrations; }

int postgres_latest_schema_version() noexcept { return kMigrations.back().version; }

}  // namespace spmvd
