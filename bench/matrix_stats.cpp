// matrix_stats: prints the feature vector the tuner decides from (tuner/feature_extraction)
// for Matrix Market files or generator specs, as text or, with --json, as JSON.
//
//   matrix_stats /work/shared/matrices/cage11.mtx.gz "stencil2d:n=2000,points=5" --json
//
// With --suite FILE the inputs are a suite file's lines (label=, derived=, renumber= tokens as
// spmv-bench reads them); with --write-mtx DIR each input is also written to DIR/<label>.mtx,
// for clients that upload Matrix Market files (bench/gpu_session.sh tuner-live).

#include <CLI/CLI.hpp>
#include <iostream>

#include "bench/bench_input.hpp"
#include "bench/feature_report.hpp"
#include "core/error.hpp"
#include "core/fingerprint.hpp"
#include "core/matrix_market.hpp"
#include "tuner/feature_extraction.hpp"

int main(int argc, char** argv) {
  CLI::App app{"Print the structural feature vector of sparse matrices"};
  std::vector<std::string> sources;
  std::string data_dir, suite_file, write_dir;
  bool json = false;
  std::size_t top = 5;
  std::int64_t copies = 1;
  app.add_option("inputs", sources, ".mtx / .mtx.gz paths or generator specs (kind:key=value,...)");
  app.add_option("--suite", suite_file, "read the inputs from a suite file (spmv-bench's format)");
  app.add_option("--write-mtx", write_dir, "also write each input to DIR/<label>.mtx");
  app.add_option("--data-dir", data_dir, "directory that relative paths are read from");
  app.add_flag("--json", json, "print one JSON object per input (an array for several)");
  app.add_option("--top", top, "how many of the most common row lengths to list")->check(CLI::PositiveNumber);
  app.add_option("--derived", copies, "replicate each input block-diagonally this many times")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 20));
  CLI11_PARSE(app, argc, argv);

  try {
    std::vector<spmvd::BenchInput> inputs;
    for (const auto& source : sources) {
      inputs.push_back(spmvd::make_bench_input(source));
      inputs.back().copies = copies;
    }
    if (!suite_file.empty())
      for (auto& input : spmvd::read_suite_file(suite_file)) inputs.push_back(std::move(input));
    if (inputs.empty()) throw spmvd::Error(spmvd::ErrorCode::invalid_argument, "no inputs given");
    nlohmann::json all = nlohmann::json::array();
    for (const auto& input : inputs) {
      const std::string& source = input.source;
      const auto matrix = spmvd::load_bench_input(input, data_dir);
      if (!write_dir.empty())
        spmvd::write_matrix_market_file(write_dir + "/" + input.label + ".mtx", matrix);
      const auto features = spmvd::extract_features(matrix);
      const auto fingerprint = spmvd::structural_fingerprint(matrix);
      if (json) {
        auto entry = spmvd::features_to_json(features, fingerprint, top);
        entry["input"] = source;
        entry["label"] = input.label;
        entry["derived_copies"] = input.copies;
        all.push_back(std::move(entry));
      } else {
        std::cout << input.label << (input.copies > 1 ? " (derived, " + std::to_string(input.copies) + " block-diagonal copies)" : "")
                  << "\n";
        spmvd::print_features(std::cout, features, fingerprint, top);
      }
    }
    if (json) std::cout << (all.size() == 1 ? all[0] : all).dump(2) << "\n";
  } catch (const spmvd::Error& e) {
    std::cerr << "matrix_stats: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
