#pragma once
// The SQLite schema as an ordered list of numbered steps. Append-only: a released step is never
// edited (databases in the field already ran it); a schema change is a new step. The store
// applies the steps a database lacks when it opens it and refuses a database whose version is
// newer than the last step here (written by a newer binary).

#include <span>

#include "db/schema_migration.hpp"

namespace spmvd {

using SqliteMigration = SchemaMigration;

std::span<const SqliteMigration> sqlite_migrations() noexcept;

// The version a database has once every step has run.
int sqlite_latest_schema_version() noexcept;

}  // namespace spmvd
