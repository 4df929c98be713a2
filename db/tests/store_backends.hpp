#pragma once
// The backends the PlanStore conformance suite runs against, each a fresh empty database:
// SQLite in a temporary file, PostgreSQL in a throwaway schema of the server named by
// SPMVD_TEST_POSTGRES_URL (deploy/run-tests.sh starts one). Each also gives raw SQL access, to
// damage rows behind the store's back as a bad disk or a buggy writer would.

#include <memory>
#include <string>

#include "db/plan_store.hpp"

namespace spmvd::test {

class StoreBackend {
 public:
  virtual ~StoreBackend() = default;
  // A new store on this backend's database: another daemon, as far as the database can tell.
  virtual std::unique_ptr<PlanStore> open() = 0;
  // Raw SQL on the same database; query returns the first column of the first row as text
  // ("" when there is none).
  virtual void exec(const std::string& sql) = 0;
  virtual std::string query(const std::string& sql) = 0;
  // Returns once no session of a killed writer can still commit. SQLite: at once (the kernel
  // releases a dead process's locks, and nothing runs on its behalf). PostgreSQL: a server
  // process goes on with its client's last statement until it tries to answer, so this waits
  // until the server has no session of this backend's stores left.
  virtual void wait_for_dead_writers() {}
};

// Environment variable with the URL of a PostgreSQL server the tests may create schemas in.
inline constexpr const char* kPostgresUrlVariable = "SPMVD_TEST_POSTGRES_URL";

std::unique_ptr<StoreBackend> make_sqlite_backend();
// The daemon's composition, opened through open_tiered_plan_store: a local SQLite file in front
// of a cluster store (another SQLite file, so that it needs no server). Raw SQL is run on both
// files (damage reaches every copy); queries read the local one.
std::unique_ptr<StoreBackend> make_tiered_backend();
// nullptr when SPMVD_TEST_POSTGRES_URL is not set.
std::unique_ptr<StoreBackend> make_postgres_backend();

// The URL a store must be given to work in `schema` of the server at url.
std::string url_with_search_path(const std::string& url, const std::string& schema);

}  // namespace spmvd::test
