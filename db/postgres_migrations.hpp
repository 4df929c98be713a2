#pragma once
// The PostgreSQL schema as an ordered list of numbered steps (schema_migration.hpp). The tables
// mean what SQLite's mean (sqlite_migrations.cpp) with PostgreSQL's types; SQLite's history
// (a key column added by a rebuild) is not repeated here, since this schema starts from it.

#include <span>

#include "db/schema_migration.hpp"

namespace spmvd {

std::span<const SchemaMigration> postgres_migrations() noexcept;

// The version a database has once every step has run.
int postgres_latest_schema_version() noexcept;

}  // namespace spmvd
