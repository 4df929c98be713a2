#pragma once
// What spmv-bench reports: per matrix its features and every candidate's result, as a short
// human table, as JSON (one document) and as CSV (one row per candidate).

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "bench/bench_input.hpp"
#include "bench/copy_bandwidth.hpp"
#include "bench/sweep.hpp"
#include "core/device_info.hpp"
#include "core/fingerprint.hpp"
#include "core/matrix_features.hpp"

namespace spmvd {

struct MatrixReport {
  BenchInput input;
  MatrixFeatures features;
  Fingerprint fingerprint;
  double load_s = 0.0;   // read or generate (and replicate)
  double sweep_s = 0.0;  // wall clock of the whole sweep: builds, checks, timings
  SweepResult sweep;
};

struct BenchReport {
  DeviceInfo device;
  CopyBandwidth copy;
  SweepOptions options;
  std::vector<MatrixReport> matrices;
  std::vector<std::string> skipped;  // inputs not run because the time budget was spent
  double total_s = 0.0;
};

nlohmann::json report_to_json(const BenchReport& report);
void write_csv(std::ostream& out, const BenchReport& report);
// Per format its fastest correct candidate, slowest first so the best ends the table; failed
// candidates listed after it.
void print_matrix_table(std::ostream& out, const MatrixReport& matrix);
// One line per matrix and precision: the winner and its ratios.
void print_summary(std::ostream& out, const BenchReport& report);

}  // namespace spmvd
