#pragma once
// The cluster plan store: one PostgreSQL database shared by every daemon of a cluster, through
// Debian's libpqxx 6.4. Same tables and semantics as SqlitePlanStore (plan_store.hpp), so both
// pass the same conformance suite.
//
// Connections: a small pool, opened on demand (at most pool_size at once; a caller waits for a
// free one). A connection that breaks (server restarted, network cut) is discarded and the
// operation is tried once more on a fresh one, since every pooled connection is then suspect;
// if that fails too the operation throws Error(unavailable). Other server errors throw
// Error(internal) with PostgreSQL's message. Thread safety: every method from any thread.
//
// Concurrency between daemons: put is one INSERT ... ON CONFLICT DO UPDATE whose WHERE clause
// is the winner rule of plan_store.hpp, atomic per row in PostgreSQL, so racing puts of one
// key leave exactly one whole row, the same whatever their order.
// The schema is migrated on open under an advisory lock (postgres_migrations.hpp), so daemons
// starting together migrate a new database once.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "db/plan_store.hpp"

namespace spmvd {

struct PostgresPlanStoreOptions {
  // libpq connection URI: postgresql://[user[:password]@]host[:port]/dbname[?param=value&...]
  std::string url;
  std::size_t pool_size = 4;              // connections open at most at once
  std::uint32_t connect_timeout_s = 5;    // added to the URL unless it names connect_timeout
  std::uint32_t statement_timeout_ms = 10000;  // a statement running longer is cancelled
};

class PostgresPlanStore final : public PlanStore {
 public:
  // Connects once and migrates. Throws Error(unavailable) when the server cannot be reached
  // (the message holds the URL without its password, and libpq's reason) and
  // Error(failed_precondition) when the schema is newer than this binary knows.
  explicit PostgresPlanStore(PostgresPlanStoreOptions options);
  ~PostgresPlanStore() override;
  PostgresPlanStore(const PostgresPlanStore&) = delete;
  PostgresPlanStore& operator=(const PostgresPlanStore&) = delete;

  std::optional<Plan> find(const PlanKey& key) override;
  // Throws Error(invalid_argument) when plan.precision or plan.tuner_version disagree with the
  // key, as SqlitePlanStore does.
  void put(const PlanKey& key, const Plan& plan) override;
  bool erase(const PlanKey& key) override;
  std::vector<StoredPlan> list(std::size_t limit) override;
  std::size_t erase_all_for_device(const std::string& device_signature) override;

  void put_calibration(const std::string& device_signature, std::uint32_t model_version,
                       const std::string& model_json) override;
  std::optional<std::string> find_calibration(const std::string& device_signature,
                                              std::uint32_t model_version) override;
  std::vector<StoredCalibration> list_calibrations() override;

  void put_samples(const std::vector<MeasurementSample>& samples,
                   std::size_t keep_per_format) override;
  std::vector<MeasurementSample> list_samples(const std::string& device_signature,
                                              Precision precision) override;

  // The schema version of the database (postgres_latest_schema_version() after open).
  int schema_version();

 private:
  class Impl;  // keeps pqxx out of this header
  std::unique_ptr<Impl> impl_;
};

// The URL with any password replaced by "***", for logs and error messages.
std::string redact_url_password(const std::string& url);

}  // namespace spmvd
