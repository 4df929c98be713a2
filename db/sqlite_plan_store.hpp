#pragma once
// The embedded plan store: one SQLite file per daemon (or shared by the daemons of one host).
//
// WAL journal with synchronous=NORMAL: a put that returned survives the process crashing (not
// necessarily the machine losing power, which costs at worst a re-tune). Several stores, in
// one process or several, may open the same file: writers wait up to busy_timeout_ms for each
// other, then retry busy_retries more times before throwing Error(unavailable).
// The schema is migrated on open (db/sqlite_migrations.hpp).

#include <cstdint>
#include <memory>
#include <string>

#include "db/plan_store.hpp"

namespace spmvd {

struct SqlitePlanStoreOptions {
  std::string path;  // a file path, or ":memory:" for a private in-memory database
  std::uint32_t busy_timeout_ms = 5000;  // how long one statement waits for another writer
  std::uint32_t busy_retries = 3;        // further attempts when a statement is still busy
};

class SqlitePlanStore final : public PlanStore {
 public:
  // Opens (creating if absent) and migrates the database. Throws Error(unavailable) when the
  // file cannot be opened (the message holds the path and SQLite's reason) and
  // Error(failed_precondition) when its schema is newer than this binary knows.
  explicit SqlitePlanStore(SqlitePlanStoreOptions options);
  ~SqlitePlanStore() override;
  SqlitePlanStore(const SqlitePlanStore&) = delete;
  SqlitePlanStore& operator=(const SqlitePlanStore&) = delete;

  std::optional<Plan> find(const PlanKey& key) override;
  // Throws Error(invalid_argument) when plan.precision or plan.tuner_version disagree with the
  // key: such a row could never be found again consistently.
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

  // The schema version of the open database (sqlite_latest_schema_version() after open).
  int schema_version();

 private:
  class Impl;  // keeps sqlite3.h out of this header
  std::unique_ptr<Impl> impl_;
};

}  // namespace spmvd
