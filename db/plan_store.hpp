#pragma once
// The plan cache and calibration store (ARCHITECTURE.md "Plans and the cache"). Backends:
// SqlitePlanStore (embedded, the default), PostgresPlanStore (shared by a cluster) and
// TieredPlanStore (a local store in front of a cluster store); open_plan_store(url) picks one.
// Every backend passes db/tests/plan_store_conformance_test.cpp.
//
// The cache is an optimisation: a stored plan that cannot be decoded is logged, deleted and
// reported as absent, so the caller re-tunes. Errors of the store itself (cannot open, disk
// full, locked past the retry budget) throw spmvd::Error.
//
// Thread safety: every method of every implementation may be called from any thread
// concurrently; several stores (processes) may share one database.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/plan.hpp"
#include "db/plan_key.hpp"

namespace spmvd {

struct StoredPlan {
  PlanKey key;
  Plan plan;
  std::int64_t created_ms = 0;  // unix time of the first put of this key
  std::int64_t updated_ms = 0;  // unix time of the latest put of this key
};

struct StoredCalibration {
  std::string device_signature;
  std::uint32_t model_version = 0;
  std::string model_json;       // the models/ serialisation, opaque to the store
  std::int64_t created_ms = 0;  // unix time of the latest put of this (device, version)
};

// One candidate measured during a real tuning (issue 17, "every measurement teaches the
// models"): what the measured refit (models/measured_refit.hpp) learns from. Stored per
// device signature, precision and format, at most keep_per_format of each (oldest dropped).
struct MeasurementSample {
  std::string device_signature;
  std::string fingerprint;         // the matrix's (Fingerprint::hex)
  std::int64_t tuned_ms = 0;       // unix time the tuning started: one tuning's candidates share it
  std::uint32_t model_version = 0; // of the models that predicted it
  // The candidate (format, format_name, params, launch), precision, the matrix's features,
  // predicted_ms (0 where no model predicted it) and measured_ms; the other fields are unused.
  Plan measured;
  std::int64_t recorded_ms = 0;  // unix time of the put; set by the store
};

// How many samples each (device, precision, format) keeps by default: enough for a stable
// median per format over a few hundred tunings, little enough that reading them all for a
// refit stays cheap (docs/TUNER.md "Samples").
inline constexpr std::size_t kDefaultSamplesPerFormat = 2000;

class PlanStore {
 public:
  virtual ~PlanStore() = default;

  // The plan stored under key, or nullopt (absent, or present but undecodable: then dropped).
  // With its partition (Plan::partition) where one is stored, read in the same snapshot; a
  // partition that does not decode drops the plan like an undecodable row.
  virtual std::optional<Plan> find(const PlanKey& key) = 0;
  // Inserts, or replaces the stored plan when the new one wins: a lower measured_ms, or an
  // equal measured_ms and a plan JSON that sorts first bytewise. Every backend applies this
  // same rule, so daemons racing to store one key end with the same single plan whatever the
  // order of their puts (a put that loses changes nothing). A replaced row keeps its
  // created_ms. To store a slower plan (a forced re-tune), erase the key first.
  // plan.partition, where set, is stored in the same transaction beside the plan (the
  // plan_partitions table, db/plan_sql.hpp): replaced with the plan when the put wins, added
  // when the stored plan is this very plan without one, never written by a put that loses.
  virtual void put(const PlanKey& key, const Plan& plan) = 0;
  // True when a row was deleted. Every deletion of a plan deletes its partition with it.
  virtual bool erase(const PlanKey& key) = 0;
  // At most limit decodable plans, most recently updated first, without their partitions (a
  // listing for people and exports; find reads a plan's).
  virtual std::vector<StoredPlan> list(std::size_t limit) = 0;
  // Deletes every plan of one device (after a driver upgrade, say); returns how many.
  virtual std::size_t erase_all_for_device(const std::string& device_signature) = 0;

  // Calibrated performance models, per device and model version; inserts or replaces.
  virtual void put_calibration(const std::string& device_signature, std::uint32_t model_version,
                               const std::string& model_json) = 0;
  virtual std::optional<std::string> find_calibration(const std::string& device_signature,
                                                      std::uint32_t model_version) = 0;
  // Every stored calibration, ordered by device then model version.
  virtual std::vector<StoredCalibration> list_calibrations() = 0;

  // Stores the samples (recorded_ms set to now), then drops the oldest samples (by recorded_ms,
  // then insertion order) of each (device, precision, format) touched beyond keep_per_format.
  // Throws Error(invalid_argument) for a sample without a device signature or fingerprint or
  // with a non-positive measured_ms.
  virtual void put_samples(const std::vector<MeasurementSample>& samples,
                           std::size_t keep_per_format) = 0;
  // The samples of one device and precision, oldest first. A sample whose JSON no longer
  // decodes (a format's parameters changed) is dropped and not returned.
  virtual std::vector<MeasurementSample> list_samples(const std::string& device_signature,
                                                      Precision precision) = 0;
};

}  // namespace spmvd
