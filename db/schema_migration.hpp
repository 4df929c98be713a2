#pragma once
// One numbered step of a store's schema (sqlite_migrations.hpp, postgres_migrations.hpp).
// A store's steps are append-only: a released step is never edited (databases in the field
// already ran it); a schema change is a new step.

namespace spmvd {

struct SchemaMigration {
  int version;              // 1, 2, 3, ... in order, no gaps
  const char* description;  // recorded in schema_version for people
  const char* sql;          // one or more statements, run inside the migration transaction
};

}  // namespace spmvd
