// feature_timing: how long feature extraction (tuner/feature_extraction) takes on this host,
// in all and per format's own_features hook, for Matrix Market files or generator specs. A
// benchmark (issue 17 counts the feature pass in SpMV-equivalents), not a test.
//
//   feature_timing "random:rows=1000000,cols=1000000,per_row=16" "stencil2d:n=2000,points=5"
//   feature_timing --renumber 7 "stencil2d:n=1000,points=5"   # the suite's renumber=7

#include <CLI/CLI.hpp>
#include <chrono>
#include <iostream>

#include "bench/bench_input.hpp"
#include "core/error.hpp"
#include "tuner/feature_extraction.hpp"

namespace {
double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
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
  CLI11_PARSE(app, argc, argv);
  try {
    for (const auto& source : sources) {
      spmvd::BenchInput input = spmvd::make_bench_input(source);
      input.renumber_seed = renumber_seed;
      const auto matrix = spmvd::load_bench_input(input, data_dir);
      std::cout << source << ": " << matrix.rows << " rows, " << matrix.nnz() << " nonzeros\n";
      auto start = std::chrono::steady_clock::now();
      const spmvd::FeatureEffort effort =
          thorough ? spmvd::FeatureEffort::thorough : spmvd::FeatureEffort::standard;
      const spmvd::MatrixFeatures features =
          spmvd::extract_features(matrix, spmvd::format_registry(), effort);
      std::cout << "  extract_features (" << (thorough ? "thorough" : "standard") << ") total "
                << seconds_since(start) << " s\n";
      // Each hook again, alone, given the features computed above (what it is given there).
      for (const spmvd::FormatEntry& entry : spmvd::format_registry().entries()) {
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
