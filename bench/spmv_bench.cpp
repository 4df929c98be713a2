// spmv-bench: measures every admissible format and candidate of the registry on each input
// (Matrix Market file, generator spec, or suite file), against cuSPARSE CSR ALG1 and the
// device's own copy bandwidth measured in the same run. Prints a short table per matrix and a
// summary, and writes every candidate to --json / --csv (rewritten after each matrix, so a run
// cut short keeps what it measured).
//
//   spmv-bench --suite bench/suite.txt --data-dir /work/shared/matrices --precision both
//              --json out/bench.json --csv out/bench.csv   (one command line)

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iterator>
#include <optional>
#include <fstream>
#include <iostream>

#include "bench/bench_input.hpp"
#include "bench/bench_report.hpp"
#include "bench/copy_bandwidth.hpp"
#include "bench/generators.hpp"
#include "bench/sweep.hpp"
#include "core/error.hpp"
#include "core/fingerprint.hpp"
#include "kernels/device.hpp"
#include "kernels/format_registry.hpp"
#include "models/device_calibration.hpp"
#include "models/part_time_predictor.hpp"
#include "tuner/feature_extraction.hpp"

namespace {

struct Options {
  std::vector<std::string> inputs;  // positional paths / specs
  std::vector<std::string> specs;   // --gen
  std::string suite;
  std::string data_dir;
  std::string precision = "fp64";
  std::string device = "auto";
  std::string json_path, csv_path;
  double copy_mb = 256.0;
  double memory_budget_gb = 0.0;  // 0: 80% of the device's memory
  double time_budget_s = 0.0;     // 0: no budget
  bool verbose = false;
  std::string calibration_path;  // --calibration: composed formats also run their model choice
  spmvd::SweepOptions sweep;
};

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

std::vector<spmvd::BenchInput> collect_inputs(const Options& options) {
  std::vector<spmvd::BenchInput> inputs;
  for (const auto& source : options.inputs) inputs.push_back(spmvd::make_bench_input(source));
  for (const auto& spec : options.specs) {
    spmvd::parse_generator_spec(spec);  // a malformed --gen fails here, before any work
    inputs.push_back(spmvd::make_bench_input(spec));
  }
  if (!options.suite.empty())
    for (auto& input : spmvd::read_suite_file(options.suite)) inputs.push_back(std::move(input));
  if (inputs.empty()) spmvd::throw_invalid("no inputs: give paths, --gen specs or --suite");
  // A missing file fails now, not after minutes of measuring the inputs before it.
  for (const auto& input : inputs) {
    if (spmvd::looks_like_generator_spec(input.source)) continue;
    std::filesystem::path path(input.source);
    if (path.is_relative() && !options.data_dir.empty()) path = std::filesystem::path(options.data_dir) / path;
    if (!std::filesystem::is_regular_file(path))
      throw spmvd::Error(spmvd::ErrorCode::not_found,
                         "input '" + input.label + "': no file " + path.string() +
                             (options.data_dir.empty() ? " (no --data-dir or $BUNDLE_DATA set)" : ""));
  }
  return inputs;
}

std::unique_ptr<spmvd::Device> open_device(const std::string& which) {
  const bool have_gpu = spmvd::cuda_device_count() > 0;
  if (which == "gpu" || (which == "auto" && have_gpu)) return spmvd::make_cuda_device(0);
  return spmvd::make_cpu_device();
}

void write_outputs(const Options& options, const spmvd::BenchReport& report) {
  if (!options.json_path.empty()) {
    std::ofstream out(options.json_path);
    if (!out) throw spmvd::Error(spmvd::ErrorCode::not_found, "cannot write --json file '" + options.json_path + "'");
    out << spmvd::report_to_json(report).dump(2) << "\n";
  }
  if (!options.csv_path.empty()) {
    std::ofstream out(options.csv_path);
    if (!out) throw spmvd::Error(spmvd::ErrorCode::not_found, "cannot write --csv file '" + options.csv_path + "'");
    spmvd::write_csv(out, report);
  }
}

int run(Options& options) {
  const auto start = Clock::now();
  const auto inputs = collect_inputs(options);
  auto device = open_device(options.device);
  const auto& info = device->info();

  spmvd::BenchReport report;
  report.device = info;
  options.sweep.memory_budget_bytes =
      options.memory_budget_gb > 0 ? static_cast<std::uint64_t>(options.memory_budget_gb * 1e9)
                                   : info.memory_bytes / 10 * 8;
  // The tuner's view of the composed formats: their partitions chosen against this device's
  // calibrated part predictions (none without --calibration).
  std::optional<spmvd::DeviceCalibration> calibration;
  std::optional<spmvd::ModelPredictor> fp32_models, fp64_models;
  std::optional<spmvd::ModelPartTimePredictor> fp32_parts, fp64_parts;
  if (!options.calibration_path.empty()) {
    std::ifstream in(options.calibration_path);
    if (!in)
      throw spmvd::Error(spmvd::ErrorCode::not_found,
                         "cannot read --calibration file '" + options.calibration_path + "'");
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    calibration = spmvd::device_calibration_from_json(text, info.signature());
    fp32_models.emplace(calibration->fp32);
    fp64_models.emplace(calibration->fp64);
    fp32_parts.emplace(*fp32_models, spmvd::format_registry(), info);
    fp64_parts.emplace(*fp64_models, spmvd::format_registry(), info);
    options.sweep.fp32_parts = &*fp32_parts;
    options.sweep.fp64_parts = &*fp64_parts;
  }
  report.options = options.sweep;
  report.copy = spmvd::measure_copy_bandwidth(
      *device, static_cast<std::uint64_t>(options.copy_mb * (1 << 20)), 20);
  std::printf("device: %s (%s), L2 %.1f MB; copy bandwidth %.1f GB/s (%.0f MB buffers, median of %d)\n",
              info.name.c_str(), info.is_gpu ? "GPU" : "CPU", static_cast<double>(info.l2_bytes) / 1e6,
              report.copy.gb_per_s, static_cast<double>(report.copy.buffer_bytes) / 1e6, report.copy.reps);

  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const double elapsed_s = seconds_since(start);
    if (options.time_budget_s > 0 && elapsed_s > options.time_budget_s) {
      for (std::size_t j = i; j < inputs.size(); ++j) report.skipped.push_back(inputs[j].label);
      std::printf("time budget of %.0f s spent after %.0f s: skipping %zu inputs\n",
                  options.time_budget_s, elapsed_s, inputs.size() - i);
      break;
    }
    spmvd::MatrixReport m;
    m.input = inputs[i];
    const auto load_start = Clock::now();
    const auto matrix = spmvd::load_bench_input(m.input, options.data_dir);
    // Thorough: the benchmark runs every candidate, the RCM reorderings included.
    m.features =
        spmvd::extract_features(matrix, spmvd::format_registry(), spmvd::FeatureEffort::thorough);
    m.fingerprint = spmvd::structural_fingerprint(matrix);
    m.load_s = seconds_since(load_start);
    const auto sweep_start = Clock::now();
    m.sweep = spmvd::sweep_matrix(matrix, m.features, *device, report.copy, options.sweep,
                                  [&](const spmvd::CandidateResult& r) {
                                    if (options.verbose)
                                      std::fprintf(stderr, "  %s %s: %s %.4f ms\n",
                                                   std::string(to_string(r.precision)).c_str(),
                                                   r.format.c_str(), to_string(r.status), r.median_ms);
                                  });
    m.sweep_s = seconds_since(sweep_start);
    spmvd::print_matrix_table(std::cout, m);
    report.matrices.push_back(std::move(m));
    report.total_s = seconds_since(start);
    write_outputs(options, report);
    const double done_s = seconds_since(start);
    const double remaining_s = done_s / static_cast<double>(i + 1) * static_cast<double>(inputs.size() - i - 1);
    std::printf("   [%zu/%zu] elapsed %.0f s, estimated remaining %.0f s (mean per input so far)\n",
                i + 1, inputs.size(), done_s, remaining_s);
    std::fflush(stdout);
  }
  report.total_s = seconds_since(start);
  write_outputs(options, report);
  spmvd::print_summary(std::cout, report);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Benchmark every SpMV format and candidate against cuSPARSE and the copy bandwidth"};
  Options options;
  if (const char* bundle = std::getenv("BUNDLE_DATA")) options.data_dir = bundle;
  std::size_t max_candidates = 0;
  // A repeated single-valued option takes the last value, so wrappers (run_suite.sh) can put
  // defaults first and let the caller's arguments override them. Lists (--gen, --formats)
  // accumulate.
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.add_option("inputs", options.inputs, ".mtx / .mtx.gz paths or generator specs")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app.add_option("--gen", options.specs, "generator spec, e.g. stencil2d:n=2000,points=5 (repeatable)")
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app.add_option("--suite", options.suite,
                 "file listing inputs one per line: <path|spec> [label=NAME] [derived=COPIES]");
  app.add_option("--data-dir", options.data_dir, "directory relative paths are read from (default $BUNDLE_DATA)");
  app.add_option("--precision", options.precision, "fp32, fp64 or both")
      ->check(CLI::IsMember({"fp32", "fp64", "both"}))->capture_default_str();
  app.add_option("--reps", options.sweep.reps, "timed applies per candidate (median, min, p90)")
      ->check(CLI::Range(20, 1000000))->capture_default_str();
  app.add_option("--short-reps", options.sweep.short_reps,
                 "timed applies in all for candidates whose median after --reps is under 50 us")
      ->check(CLI::Range(0, 1000000))->capture_default_str();
  app.add_option("--warmup", options.sweep.warmup, "untimed applies before timing")
      ->check(CLI::Range(0, 1000000))->capture_default_str();
  std::string vectors = "rotated";
  app.add_option("--vectors", vectors,
                 "rotated: below L2, each timed apply takes an x/y pair not touched for 1.5x L2 "
                 "(cold vectors, hot matrix); hot: one x/y pair, as the daemon and the "
                 "calibration run")
      ->check(CLI::IsMember({"rotated", "hot"}))->capture_default_str();
  app.add_option("--formats", options.sweep.formats, "registry format names to run (default: all)")
      ->delimiter(',')
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app.add_option("--max-candidates-per-format", max_candidates,
                 "evenly spaced candidates per format (0: all; cuSPARSE CSR ALG1 always runs)")
      ->capture_default_str();
  app.add_option("--calibration", options.calibration_path,
                 "calibration JSON of this device (spmv-calibrate --out): composed formats also "
                 "run the partitions they choose against its models, as the tuner would");
  app.add_option("--json", options.json_path, "write every result as JSON here");
  app.add_option("--csv", options.csv_path, "write every result as CSV here");
  app.add_option("--device", options.device, "auto (GPU 0 if present), gpu or cpu")
      ->check(CLI::IsMember({"auto", "gpu", "cpu"}))->capture_default_str();
  app.add_option("--copy-mb", options.copy_mb,
                 "minimum copy-bandwidth buffer in MiB (at least 4x L2 is used; lower only in tests)")
      ->check(CLI::PositiveNumber)->capture_default_str();
  app.add_option("--memory-budget-gb", options.memory_budget_gb,
                 "memory budget: a format with no candidate within it, and any candidate "
                 "whose device bytes exceed it, is listed as inadmissible, not run (default 80% "
                 "of the device's memory)");
  app.add_option("--time-budget-s", options.time_budget_s,
                 "start no new input after this many seconds (0: no limit)");
  app.add_flag("--verbose", options.verbose, "print every candidate as it finishes (stderr)");
  CLI11_PARSE(app, argc, argv);
  options.sweep.max_candidates_per_format = max_candidates;
  options.sweep.rotate_vectors = vectors == "rotated";
  if (options.precision == "both")
    options.sweep.precisions = {spmvd::Precision::fp32, spmvd::Precision::fp64};
  else
    options.sweep.precisions = {*spmvd::parse_precision(options.precision)};

  try {
    return run(options);
  } catch (const spmvd::Error& e) {
    std::fprintf(stderr, "spmv-bench: %s\n", e.what());
    return 1;
  }
}
