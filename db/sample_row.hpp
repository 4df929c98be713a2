#pragma once
// A samples-table row as every backend writes and reads it (plan_sql.hpp kSampleColumns), so
// SQLite and PostgreSQL accept, store and drop exactly the same samples (plan_store.hpp).

#include <cstdint>
#include <string>
#include <variant>

#include "db/plan_store.hpp"

namespace spmvd {

struct SampleRow {
  std::int64_t id = 0;
  std::string device;
  std::int64_t precision = 0;
  std::int64_t format_id = 0;
  std::string fingerprint;
  std::int64_t tuned_ms = 0;
  std::int64_t model_version = 0;
  double predicted_ms = 0.0;
  double measured_ms = 0.0;
  std::string sample_json;
  std::int64_t recorded_ms = 0;
};

// The row put_samples writes for sample at recorded_ms. Throws Error(invalid_argument) for a
// sample the store refuses (plan_store.hpp put_samples).
SampleRow sample_row(const MeasurementSample& sample, std::int64_t recorded_ms);

// The sample a row holds, or why it cannot be trusted (then the row is dropped).
std::variant<MeasurementSample, std::string> decode_sample_row(const SampleRow& row);

}  // namespace spmvd
