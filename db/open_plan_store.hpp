#pragma once
// Plan stores chosen by URL (the daemon's `database` and `cluster-store` keys):
//   sqlite:///var/lib/spmvd/plans.db   SQLite file at an absolute path
//   sqlite://plans.db                  SQLite file relative to the working directory
//   /var/lib/spmvd/plans.db, plans.db  a plain path: SQLite (the `database` key's old form)
//   postgresql://[user[:password]@]host[:port]/dbname[?...]   PostgreSQL (postgres:// too);
//                                      any libpq URI parameter is passed on

#include <memory>
#include <string>

#include "db/plan_store.hpp"
#include "db/tiered_plan_store.hpp"

namespace spmvd {

enum class PlanStoreKind { sqlite, postgresql };

struct PlanStoreLocation {
  PlanStoreKind kind = PlanStoreKind::sqlite;
  std::string target;  // SQLite: the file path; PostgreSQL: the URL as given

  friend bool operator==(const PlanStoreLocation&, const PlanStoreLocation&) = default;
};

// Throws Error(invalid_argument) naming the URL for an empty one, an empty SQLite path or an
// unknown scheme.
PlanStoreLocation parse_plan_store_url(const std::string& url);

// Opens (and migrates) the store; throws as its constructor does (SqlitePlanStore,
// PostgresPlanStore).
std::unique_ptr<PlanStore> open_plan_store(const std::string& url);

// The daemon's store: the store at local_url, in front of the cluster store at cluster_url
// when that is not empty. With a cluster the local store must be a SQLite file (it holds the
// outbox): otherwise Error(invalid_argument). The local store must open (its errors are
// thrown); the cluster store may be unreachable (TieredPlanStore retries it).
std::unique_ptr<TieredPlanStore> open_tiered_plan_store(const std::string& local_url,
                                                        const std::string& cluster_url,
                                                        TieredPlanStoreOptions options = {});

// For logs: the URL without its password.
std::string displayed_plan_store_url(const std::string& url);

}  // namespace spmvd
