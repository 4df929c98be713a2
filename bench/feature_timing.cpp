// feature_timing: how long feature extraction (tuner/feature_extraction) takes on this host,
// in all and per format's own_features hook, for Matrix Market files or generator specs. A
// benchmark (issue 17 counts the feature pass in SpMV-equivalents), not a test.
//
//   feature_timing "random:rows=1000000,cols=1000000,per_row=16" "stencil2d:n=2000,points=5"
//   feature_timing --renumber 7 "stencil2d:n=1000,points=5"   # the suite's renumber=7
//   feature_timing --calibration h100.json --expected-multiplies 1000 "stencil2d:n=700,points=9"
//
// With a calibration, the pass leaves out the formats whose build the expected multiplies
// cannot repay, as the daemon's does (tuner.hpp repayable_formats; the default plan serving).

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <iostream>
#include <optional>

#include "bench/bench_input.hpp"
#include "bench/tuning_setup.hpp"
#include "core/error.hpp"
#include "core/structure_features.hpp"
#include "partition/row_length_distribution.hpp"
#include "tuner/feature_extraction.hpp"
#include "tuner/tuner.hpp"

namespace {
double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double median_of(std::vector<double> values) {
  std::nth_element(values.begin(), values.begin() + values.size() / 2, values.end());
  return values[values.size() / 2];
}
}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Time feature extraction and every format's own_features hook"};
  std::vector<std::string> sources;
  std::string data_dir;
  app.add_option("inputs", sources, ".mtx / .mtx.gz paths or generator specs (kind:key=value,...)")
      ->required();
  app.add_option("--data-dir", data_dir, "directory that relative paths are read from");
  bool thorough = false;
  app.add_flag("--thorough", thorough,
               "a thorough pass (FeatureEffort::thorough: RCM sized), as a tuning expecting very "
               "many multiplies runs it");
  std::uint64_t renumber_seed = 0;
  app.add_option("--renumber", renumber_seed,
                 "renumber rows and columns at random with this seed (a suite's renumber=SEED)");
  int repeat = 5;
  app.add_option("--repeat", repeat, "feature passes per input; the median is printed (default 5)");
  std::string calibration_path;
  app.add_option("--calibration", calibration_path,
                 "device calibration JSON: leave out the formats whose build the expected "
                 "multiplies cannot repay, as the daemon does");
  std::uint64_t expected_multiplies = 1000;
  app.add_option("--expected-multiplies", expected_multiplies,
                 "the tuning's hint, with --calibration")
      ->capture_default_str();
  std::string precision_name = "fp64";
  app.add_option("--precision", precision_name, "fp64 or fp32, with --calibration")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  try {
    std::optional<spmvd::DeviceCalibration> calibration;
    std::optional<spmvd::ModelPredictor> models;
    const std::optional<spmvd::Precision> precision = spmvd::parse_precision(precision_name);
    if (!precision)
      throw spmvd::Error(spmvd::ErrorCode::invalid_argument, "bad --precision " + precision_name);
    if (!calibration_path.empty()) {
      calibration = spmvd::read_device_calibration(calibration_path);
      models.emplace(*precision == spmvd::Precision::fp32 ? calibration->fp32 : calibration->fp64);
    }
    spmvd::TunerOptions tuner;
    const auto computes_own = [&](const spmvd::MatrixFeatures& common) -> spmvd::FormatFilter {
      if (!models) return {};
      return spmvd::repayable_formats(
          *models, spmvd::format_registry(), common, calibration->device, *precision, tuner,
          spmvd::default_serving_candidate(common, calibration->device), expected_multiplies);
    };
    for (const auto& source : sources) {
      spmvd::BenchInput input = spmvd::make_bench_input(source);
      input.renumber_seed = renumber_seed;
      const auto matrix = spmvd::load_bench_input(input, data_dir);
      std::cout << source << ": " << matrix.rows << " rows, " << matrix.nnz() << " nonzeros\n";
      const spmvd::FeatureEffort effort =
          thorough ? spmvd::FeatureEffort::thorough : spmvd::FeatureEffort::standard;
      // The first pass also starts oneTBB's workers and faults in its buffers, which a daemon
      // has done long before: the median of the later ones is what a tuning pays.
      std::vector<double> totals;
      spmvd::MatrixFeatures features;
      for (int i = 0; i < std::max(1, repeat); ++i) {
        const auto start = std::chrono::steady_clock::now();
        features = spmvd::extract_features(matrix, spmvd::format_registry(), effort, nullptr,
                                           computes_own);
        totals.push_back(seconds_since(start));
      }
      std::cout << "  extract_features (" << (thorough ? "thorough" : "standard") << ") total "
                << median_of(totals) << " s (first " << totals.front() << " s)\n";
      if (!features.formats_left_out.empty()) {
        std::cout << "  left out:";
        for (const std::string& name : features.formats_left_out) std::cout << " " << name;
        std::cout << "\n";
      }
      // The common part's walks, alone.
      auto start = std::chrono::steady_clock::now();
      (void)spmvd::row_length_distribution(matrix.row_offsets);
      std::cout << "  common: row_length_distribution " << seconds_since(start) << " s\n";
      start = std::chrono::steady_clock::now();
      (void)spmvd::x_sectors_per_nonzero(matrix);
      std::cout << "  common: x_sectors_per_nonzero " << seconds_since(start) << " s\n";
      // Each hook the pass ran again, alone, given the features computed above (what it is
      // given there).
      for (const spmvd::FormatEntry& entry : spmvd::format_registry().entries()) {
        if (features.left_out(entry.rules->name())) continue;
        start = std::chrono::steady_clock::now();
        const bool has = spmvd::own_features_at(*entry.rules, matrix, features, effort).has_value();
        const double s = seconds_since(start);
        if (has) std::cout << "  " << entry.rules->name() << " own_features " << s << " s\n";
      }
    }
  } catch (const spmvd::Error& e) {
    std::cerr << "feature_timing: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
