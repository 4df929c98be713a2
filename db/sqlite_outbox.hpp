#pragma once
// The durable list of what the cluster store has not received yet, kept in the local SQLite
// file (tables cluster_outbox_plans and cluster_outbox_calibrations, sqlite_migrations.cpp) so
// that it survives a daemon restart. TieredPlanStore queues a key when writing it to the
// cluster fails, and replays the queue when the cluster answers again.
//
// Entries are keys, not payloads: the replay reads the key's row from the local tier at that
// time and pushes it, so the outbox never holds a plan the local tier has since replaced or
// dropped. Queuing a key that is already queued replaces its entry with a new id; remove(id)
// deletes only the entry with that id, so an entry queued again while a replay delivered the
// older one stays queued.
//
// Thread safety: every method from any thread (one connection behind a mutex); other
// connections to the same file (the SqlitePlanStore, other daemons) wait up to
// busy_timeout_ms for each other.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "db/plan_key.hpp"

namespace spmvd {

struct OutboxPlan {
  std::int64_t id = 0;
  PlanKey key;
};

struct OutboxCalibration {
  std::int64_t id = 0;
  std::string device_signature;
  std::uint32_t model_version = 0;
};

class SqliteOutbox {
 public:
  // Opens the outbox tables of a SQLite file that a SqlitePlanStore has opened (and so
  // migrated) first. Throws Error(unavailable) when the file cannot be opened and
  // Error(failed_precondition) when it has no outbox tables.
  explicit SqliteOutbox(std::string path, std::uint32_t busy_timeout_ms = 5000);
  ~SqliteOutbox();
  SqliteOutbox(const SqliteOutbox&) = delete;
  SqliteOutbox& operator=(const SqliteOutbox&) = delete;

  void queue_plan(const PlanKey& key);
  void queue_calibration(const std::string& device_signature, std::uint32_t model_version);

  // At most limit entries, oldest first. An entry whose key columns no longer decode is
  // deleted (with a warning) instead of returned.
  std::vector<OutboxPlan> plans(std::size_t limit);
  std::vector<OutboxCalibration> calibrations(std::size_t limit);

  // Deletes the entry with this id (delivered); a no-op when it was queued again since.
  void remove_plan(std::int64_t id);
  void remove_calibration(std::int64_t id);
  // Deletes the entries of a key or of a device whose local rows were erased: nothing to
  // deliver any more.
  void discard_plan(const PlanKey& key);
  void discard_device(const std::string& device_signature);

  // Plan and calibration entries together.
  std::size_t size();

 private:
  class Impl;  // keeps sqlite3.h out of this header
  std::unique_ptr<Impl> impl_;
};

}  // namespace spmvd
