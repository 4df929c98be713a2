// ranking-timing: how long the tuner's ranking takes on this host: what tune_matrix does
// between the feature pass and the first build (issue 17 counts it in SpMV-equivalents):
// enumerating every format's candidates, the composed formats choosing their partitions
// against the part predictions (FormatRules::candidates_chosen_by), and predicting and ranking
// every candidate, the builds charged over the expected multiplies and the default plan
// (cuSPARSE CSR ALG1) serving. Features are extracted once (standard effort, as a tuning of
// fewer than TunerOptions::thorough_features_multiplies extracts them, the formats whose build
// the expected multiplies cannot repay left out); the rest is repeated.
// Prints the median ms, a per-format breakdown and a hash of the ranked list (formats,
// parameters, launches and predicted times, bit for bit): two builds that print the same hash
// rank the same. A benchmark, not a test.
//
//   ranking-timing --calibration h100-calibration.json --data-dir ../shared/matrices
//                  Franz6_id1959_aug.mtx.gz "delaunay_n16.mtx.gz derived=48" "circuit:rows=3000000,dense_rows=50,dense_len=50000"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <bit>
#include <chrono>
#include <cstdio>
#include <map>
#include <sstream>

#include "bench/bench_input.hpp"
#include "bench/tuning_setup.hpp"
#include "core/error.hpp"
#include "kernels/format_registry.hpp"
#include "models/device_calibration.hpp"
#include "models/model_predictor.hpp"
#include "models/part_time_predictor.hpp"
#include "tuner/feature_extraction.hpp"
#include "tuner/tuner.hpp"

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

double median(std::vector<double> values) {
  if (values.empty()) return 0.0;
  std::nth_element(values.begin(), values.begin() + values.size() / 2, values.end());
  return values[values.size() / 2];
}

// FNV-1a over every ranked candidate's format, parameters, launch and predicted time's bits.
std::uint64_t ranking_hash(std::span<const spmvd::RankedCandidate> ranked) {
  std::uint64_t h = 1469598103934665603ull;
  const auto mix = [&h](std::string_view bytes) {
    for (const char c : bytes) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  };
  for (const spmvd::RankedCandidate& r : ranked) {
    mix(std::to_string(r.candidate.format.value) + "|" + spmvd::to_string(r.candidate.params) +
        "|" + spmvd::to_string(r.candidate.launch) + "|");
    mix(r.predicted_ms ? std::to_string(std::bit_cast<std::uint64_t>(*r.predicted_ms)) : "-");
    mix(";");
  }
  return h;
}

// The models and estimates tune_matrix sets up for one matrix, with the default plan serving.
struct TuningSetup {
  TuningSetup(const spmvd::ModelPredictor& models, const spmvd::FormatRegistry& registry,
              const spmvd::MatrixFeatures& features, const spmvd::DeviceInfo& device,
              spmvd::Precision precision, const spmvd::TunerOptions& options,
              const spmvd::Candidate& serving)
      : parts(models, registry, device),
        candidates(models, registry, features, device, precision),
        build_costs(registry, options, features.nnz, &serving,
                    models.model_set().host_build_rates, &features, precision) {}
  spmvd::ModelPartTimePredictor parts;
  spmvd::ModelCandidatePredictor candidates;
  spmvd::RegistryBuildCostEstimate build_costs;
};

// tune_matrix up to its first build: enumeration (composed formats choosing by the models where
// their build could be repaid) and ranking into measurement order.
std::vector<spmvd::RankedCandidate> rank_as_the_tuner(const spmvd::ModelPredictor& models,
                                                      const spmvd::MatrixFeatures& features,
                                                      const spmvd::DeviceInfo& device,
                                                      spmvd::Precision precision,
                                                      const spmvd::TunerOptions& options,
                                                      const spmvd::Candidate& serving) {
  const spmvd::FormatRegistry& registry = spmvd::format_registry();
  const TuningSetup setup(models, registry, features, device, precision, options, serving);
  const spmvd::FormatFilter repayable = spmvd::repayable_formats(
      setup.candidates, setup.build_costs, serving, options.default_expected_multiplies);
  const auto candidates = spmvd::enumerate_candidates(
      registry, features, device, precision, options.memory_budget_bytes, &setup.parts, repayable);
  const auto ranked = spmvd::rank_candidates(candidates, setup.candidates, &setup.build_costs,
                                             options.default_expected_multiplies);
  return spmvd::measurement_order(ranked);
}

// Time in one format: its enumeration (admissibility, candidates or candidates_chosen_by, the
// memory filter) and the predictions of its candidates.
struct FormatTime {
  std::vector<double> enumerate_ms;
  std::vector<double> predict_ms;
  std::size_t candidates = 0;
};

// The same work as rank_as_the_tuner, format by format (the sort, a few microseconds, aside).
void time_per_format(const spmvd::ModelPredictor& models, const spmvd::MatrixFeatures& features,
                     const spmvd::DeviceInfo& device, spmvd::Precision precision,
                     const spmvd::TunerOptions& options, const spmvd::Candidate& serving,
                     std::map<std::string, FormatTime>& out) {
  const spmvd::FormatRegistry& registry = spmvd::format_registry();
  const TuningSetup setup(models, registry, features, device, precision, options, serving);
  const spmvd::FormatFilter repayable = spmvd::repayable_formats(
      setup.candidates, setup.build_costs, serving, options.default_expected_multiplies);
  for (const spmvd::FormatEntry& entry : registry.entries()) {
    if (entry.rules->needs_gpu() && !device.is_gpu) continue;
    FormatTime& t = out[std::string(entry.rules->name())];
    auto start = Clock::now();
    const std::vector<spmvd::Candidate> space =
        spmvd::enumerate_format(entry, features, device, precision, options.memory_budget_bytes,
                                &setup.parts, repayable);
    t.enumerate_ms.push_back(ms_since(start));
    start = Clock::now();
    for (const spmvd::Candidate& c : space) (void)setup.candidates.predict(c);
    t.predict_ms.push_back(ms_since(start));
    t.candidates = space.size();
  }
}

struct Options {
  std::string calibration_path;
  std::string data_dir;
  std::vector<std::string> inputs;
  int repetitions = 20;
  std::string precision = "fp64";
  std::uint64_t expected_multiplies = 1000;
  bool list = false;
};

int run(const Options& options) {
  const spmvd::DeviceCalibration calibration =
      spmvd::read_device_calibration(options.calibration_path);
  const spmvd::DeviceInfo& device = calibration.device;
  const std::string signature = device.signature();
  const auto precision = spmvd::parse_precision(options.precision);
  if (!precision)
    throw spmvd::Error(spmvd::ErrorCode::invalid_argument, "bad --precision " + options.precision);
  const spmvd::ModelPredictor models(
      *precision == spmvd::Precision::fp32 ? calibration.fp32 : calibration.fp64);
  spmvd::TunerOptions tuner;
  tuner.default_expected_multiplies = options.expected_multiplies;
  tuner.memory_budget_bytes = device.memory_bytes;  // the whole device: none filtered by memory
  std::printf("device: %s, %s, %llu expected multiplies, %d repetitions\n", signature.c_str(),
              options.precision.c_str(),
              static_cast<unsigned long long>(options.expected_multiplies), options.repetitions);
  for (const std::string& source : options.inputs) {
    // A suite line: "<path or spec> [derived=COPIES] [renumber=SEED]".
    std::istringstream line(source);
    const std::vector<spmvd::BenchInput> parsed = spmvd::parse_suite(line, "input");
    if (parsed.size() != 1)
      throw spmvd::Error(spmvd::ErrorCode::invalid_argument, "not one input: " + source);
    const auto matrix = spmvd::load_bench_input(parsed.front(), options.data_dir);
    // As the daemon's pass: the formats whose build these multiplies cannot repay left out.
    const spmvd::MatrixFeatures features = spmvd::extract_features(
        matrix, spmvd::format_registry(), spmvd::FeatureEffort::standard, nullptr,
        [&](const spmvd::MatrixFeatures& common) {
          return spmvd::repayable_formats(models, spmvd::format_registry(), common, device,
                                          *precision, tuner,
                                          spmvd::default_serving_candidate(common, device),
                                          tuner.default_expected_multiplies);
        });
    const spmvd::Candidate serving = spmvd::default_serving_candidate(features, device);
    std::vector<double> total_ms;
    std::vector<spmvd::RankedCandidate> ranked;
    for (int i = 0; i < options.repetitions; ++i) {
      const auto start = Clock::now();
      ranked = rank_as_the_tuner(models, features, device, *precision, tuner, serving);
      total_ms.push_back(ms_since(start));
    }
    std::map<std::string, FormatTime> formats;
    for (int i = 0; i < options.repetitions; ++i)
      time_per_format(models, features, device, *precision, tuner, serving, formats);
    std::printf("%s: %lld rows, %lld nonzeros: %zu candidates, ranking median %.3f ms (min %.3f), "
                "hash %016llx\n",
                source.c_str(), static_cast<long long>(matrix.rows),
                static_cast<long long>(matrix.nnz()), ranked.size(), median(total_ms),
                *std::min_element(total_ms.begin(), total_ms.end()),
                static_cast<unsigned long long>(ranking_hash(ranked)));
    for (const auto& [name, t] : formats) {
      const double enumerate = median(t.enumerate_ms);
      const double predict = median(t.predict_ms);
      if (t.candidates == 0 && enumerate < 0.001) continue;
      std::printf("  %-22s %3zu candidates  enumerate %8.3f ms  predict %8.3f ms\n",
                  name.c_str(), t.candidates, enumerate, predict);
    }
    if (options.list)
      for (const spmvd::RankedCandidate& r : ranked)
        std::printf("    %-18s %s %s %s\n",
                    std::string(spmvd::format_registry().find(r.candidate.format)->rules->name())
                        .c_str(),
                    spmvd::to_string(r.candidate.params).c_str(),
                    spmvd::to_string(r.candidate.launch).c_str(),
                    r.predicted_ms ? std::to_string(*r.predicted_ms).c_str() : "-");
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Time the tuner's enumeration and ranking (between features and the first build)"};
  Options options;
  if (const char* bundle = std::getenv("BUNDLE_DATA")) options.data_dir = bundle;
  app.add_option("inputs", options.inputs,
                 ".mtx / .mtx.gz paths or generator specs, each as a suite line (derived=, "
                 "renumber=)")->required();
  app.add_option("--calibration", options.calibration_path,
                 "device calibration JSON (spmv-calibrate --out)")
      ->required();
  app.add_option("--data-dir", options.data_dir, "directory that relative paths are read from");
  app.add_option("--repetitions", options.repetitions, "timed repetitions per input")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  app.add_option("--precision", options.precision, "fp64 or fp32")->capture_default_str();
  app.add_option("--expected-multiplies", options.expected_multiplies,
                 "the tuning's hint: the build charge, and which composed formats choose by the "
                 "models (those whose build the multiplies could repay)")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 50))
      ->capture_default_str();
  app.add_flag("--list", options.list, "print the ranked candidates too");
  CLI11_PARSE(app, argc, argv);
  try {
    return run(options);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ranking-timing: %s\n", e.what());
    return 1;
  }
}
