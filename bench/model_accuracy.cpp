// model-accuracy: how well a device calibration (spmv-calibrate --out) predicts what spmv-bench
// measured on the same device. Every correct measured candidate is predicted as the tuner would
// predict it (its format's model family, FormatRules::device_bytes for the bytes fallback);
// the report gives per family and per format the median and 90th-percentile absolute relative
// error, per matrix the Spearman rank correlation of the candidates and whether the model's
// favourite measured within the tolerance of the best, and the fraction of matrices where it
// did. spmv-bench's JSON keeps only a summary of the row-length distribution, so each input is
// read again (or regenerated) to compute its full features; its fingerprint must match.
//
//   model-accuracy --calibration calibration.json --bench bench.json
//                  --data-dir /work/shared/matrices --markdown accuracy.md --json accuracy.json
//                  [--without cache_resident --without locality ...]   (ablations)
//
// Or from the samples the daemon's tuner stored (`--samples plans.db`, every candidate an
// exhaustive tuning measured, with the features it saw): each matrix's favourite is then the
// one the tuner's ranking would put first, the build charged over --expected-multiplies as
// TunerOptions charges it, so a model change can be judged on what model-only would keep.

#include "models/model_accuracy.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <sstream>

#include "bench/bench_input.hpp"
#include "db/sqlite_plan_store.hpp"
#include "core/error.hpp"
#include "core/field_set_json.hpp"
#include "core/fingerprint.hpp"
#include "core/launch_config.hpp"
#include "kernels/format_registry.hpp"
#include "models/device_calibration.hpp"
#include "models/model_predictor.hpp"
#include "models/part_time_predictor.hpp"
#include "models/svg_plot.hpp"
#include "tuner/feature_extraction.hpp"
#include "tuner/tuner.hpp"

namespace {

struct Options {
  std::string calibration_path;
  std::string bench_path;
  std::string samples_path;
  std::uint64_t expected_multiplies = 0;  // samples: 0 ranks by prediction alone
  std::string data_dir;
  std::string markdown_path;
  std::string json_path;
  double tolerance = 0.10;
  std::vector<std::string> without;  // correction steps switched off (ablation)
};

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw spmvd::Error(spmvd::ErrorCode::not_found, "cannot read " + path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

template <typename Fields>
Fields fields_from_json(const nlohmann::json& j) {
  Fields fields;
  spmvd::for_each_field(fields, [&j](const char* name, auto& value) { j.at(name).get_to(value); });
  return fields;
}

// The candidate the tuner would enumerate for a stored result on these features and this
// device (memory aside: the benchmark already built it): the format's candidate with the
// stored launch whose every parameter equals the stored one of its name. Benchmarks written
// before each format had its own parameter struct stored every format's fields (unused ones
// 0); they read the same way. nullopt where the rules offer no such candidate.
std::optional<spmvd::Candidate> offered(const spmvd::FormatRules& rules,
                                        const spmvd::MatrixFeatures& features,
                                        const spmvd::DeviceInfo& device, spmvd::Precision precision,
                                        const spmvd::FieldSet& stored_params,
                                        const spmvd::LaunchConfig& launch,
                                        const spmvd::PartTimePredictor& parts) {
  if (!rules.admissible(features, device, precision, std::numeric_limits<std::uint64_t>::max()))
    return std::nullopt;
  // A composed format's model-chosen partitions are offered too (spmv-bench --calibration).
  std::vector<spmvd::Candidate> space = rules.candidates(features, device);
  for (spmvd::Candidate& c : rules.candidates_chosen_by(parts, features, device))
    if (std::find(space.begin(), space.end(), c) == space.end()) space.push_back(std::move(c));
  for (const spmvd::Candidate& c : space) {
    if (!(c.launch == launch)) continue;
    bool same = true;
    for (const spmvd::NamedField& field : c.params.fields()) {
      const spmvd::NamedField* stored = stored_params.find(field.name);
      same = same && stored != nullptr && stored->value == field.value;
    }
    if (same) return c;
  }
  return std::nullopt;
}

std::string describe(const std::string& format, const spmvd::Candidate& c) {
  std::string text = format;
  for (const std::string& part : {spmvd::to_string(c.params), spmvd::to_string(c.launch)})
    if (part != "-") text += " " + part;
  return text;
}

// What the points were predicted from, and what could not be.
struct Collected {
  std::vector<spmvd::AccuracyPoint> points;
  std::map<std::string, std::size_t> unpredicted;  // reason -> count
  // format -> measured candidates the registry's rules no longer offer for the matrix (BSR
  // over its fill limit since model version 6): the tuner never ranks them, so neither do we.
  std::map<std::string, std::size_t> not_offered;
};

struct Predictors {
  explicit Predictors(const spmvd::DeviceCalibration& calibration,
                      std::span<const std::string> without)
      : fp32(calibration.fp32, without),
        fp64(calibration.fp64, without),
        fp32_parts(fp32, spmvd::format_registry(), calibration.device),
        fp64_parts(fp64, spmvd::format_registry(), calibration.device) {}
  const spmvd::ModelPredictor& of(spmvd::Precision p) const {
    return p == spmvd::Precision::fp32 ? fp32 : fp64;
  }
  const spmvd::PartTimePredictor& parts_of(spmvd::Precision p) const {
    return p == spmvd::Precision::fp32 ? fp32_parts : fp64_parts;
  }
  spmvd::ModelPredictor fp32, fp64;
  spmvd::ModelPartTimePredictor fp32_parts, fp64_parts;
};

// Predicts one measured candidate as the tuner would, into out.points (or counts why not).
// Returns the point's index, or nullopt.
std::optional<std::size_t> predict_measured(const Predictors& predictors,
                                            const spmvd::DeviceInfo& device,
                                            const spmvd::MatrixFeatures& features,
                                            const std::string& label, spmvd::Precision precision,
                                            const std::string& format, spmvd::Candidate candidate,
                                            double measured_ms, Collected& out) {
  // As the tuner passes it; the operator's reported footprint where this build lacks the
  // format (a CPU-only build reading a GPU benchmark).
  const spmvd::FormatEntry* entry = spmvd::format_registry().find(candidate.format);
  if (entry == nullptr) {
    ++out.unpredicted[format + ": not compiled into this build"];
    return std::nullopt;
  }
  // Features stored by an older build that this one's format no longer reads throw as a
  // prediction that fails does: counted, not judged.
  try {
    const std::optional<spmvd::Candidate> own =
        offered(*entry->rules, features, device, precision, candidate.params, candidate.launch,
                predictors.parts_of(precision));
    if (!own) {
      ++out.not_offered[format];
      return std::nullopt;
    }
    candidate = *own;
    const std::uint64_t matrix_bytes = entry->rules->streamed_bytes(features, precision, candidate);
    const spmvd::ModelPredictor& predictor = predictors.of(precision);
    const spmvd::Prediction p =
        predictor.predict_ms(*entry->rules, features, candidate, device, matrix_bytes);
    out.points.push_back({.matrix = label,
                          .precision = precision,
                          .format = format,
                          .family = std::string(predictor.predicting_family(*entry->rules).name()),
                          .candidate = describe(format, candidate),
                          .predicted_ms = p.ms,
                          .measured_ms = measured_ms});
    return out.points.size() - 1;
  } catch (const spmvd::Error& e) {
    ++out.unpredicted[format + ": " + e.what()];
    return std::nullopt;
  }
}

Collected from_bench(const Options& options, const nlohmann::json& bench,
                     const spmvd::DeviceInfo& device, const Predictors& predictors) {
  Collected out;
  for (const auto& m : bench.at("matrices")) {
    const spmvd::BenchInput input{.source = m.at("source").get<std::string>(),
                                  .label = m.at("label").get<std::string>(),
                                  .copies = m.at("derived_copies").get<std::int64_t>(),
                                  .renumber_seed = m.value("renumber_seed", std::uint64_t{0})};
    const auto matrix = spmvd::load_bench_input(input, options.data_dir);
    // As spmv-bench extracted them (thorough), so that every candidate it ran is predicted.
    const spmvd::MatrixFeatures features =
        spmvd::extract_features(matrix, spmvd::format_registry(), spmvd::FeatureEffort::thorough);
    const std::string fingerprint = spmvd::structural_fingerprint(matrix).hex();
    if (fingerprint != m.at("features").at("fingerprint").get<std::string>()) {
      throw spmvd::Error(spmvd::ErrorCode::failed_precondition,
                         input.label + ": " + input.source + " now has fingerprint " + fingerprint +
                             ", the benchmark measured " +
                             m["features"]["fingerprint"].get<std::string>());
    }
    for (const auto& r : m.at("results")) {
      if (!r.at("correct").get<bool>() || !(r.at("time_ms").get<double>() > 0.0)) continue;
      const auto precision = spmvd::parse_precision(r.at("precision").get<std::string>());
      if (!precision)
        throw spmvd::Error(spmvd::ErrorCode::invalid_argument,
                           "bad precision in " + options.bench_path);
      spmvd::Candidate candidate{
          .format = spmvd::FormatId{r.at("format_id").get<std::uint16_t>()},
          .params = spmvd::field_set_from_json(r.at("params"), options.bench_path, "params"),
          .launch = fields_from_json<spmvd::LaunchConfig>(r.at("launch"))};
      predict_measured(predictors, device, features, input.label, *precision,
                       r.at("format").get<std::string>(), std::move(candidate),
                       r.at("time_ms").get<double>(), out);
    }
    std::fprintf(stderr, "  %s: %zu predictions so far\n", input.label.c_str(), out.points.size());
  }
  return out;
}

// The tuner's samples of this device: every measured candidate of every stored tuning, each
// matrix labelled by its shape and fingerprint. With expected multiplies, each point's ranking
// key carries its build's charge as the tuner's (the ALG1 baseline serves: it costs nothing).
Collected from_samples(const Options& options, const std::string& signature,
                       const spmvd::DeviceInfo& device, const Predictors& predictors) {
  // Opening a store creates a missing file: a mistyped path would judge an empty database.
  if (!std::filesystem::is_regular_file(options.samples_path))
    throw spmvd::Error(spmvd::ErrorCode::not_found,
                       "no plan database at " + options.samples_path + " (--samples)");
  spmvd::SqlitePlanStore store(spmvd::SqlitePlanStoreOptions{.path = options.samples_path});
  const spmvd::TunerOptions tuner;
  Collected out;
  for (const spmvd::Precision precision : {spmvd::Precision::fp64, spmvd::Precision::fp32}) {
    for (const spmvd::MeasurementSample& s : store.list_samples(signature, precision)) {
      const spmvd::Plan& p = s.measured;
      if (!(p.measured_ms > 0.0)) continue;
      const std::string label = std::to_string(p.features.rows) + "x" +
                                std::to_string(p.features.cols) + " nnz " +
                                std::to_string(p.features.nnz) + " " +
                                s.fingerprint.substr(0, 8);
      const spmvd::Candidate candidate{p.format, p.params, p.launch};
      const std::optional<std::size_t> index =
          predict_measured(predictors, device, p.features, label, precision, p.format_name,
                           candidate, p.measured_ms, out);
      if (!index || options.expected_multiplies == 0) continue;
      const spmvd::RegistryBuildCostEstimate builds(
          spmvd::format_registry(), tuner, p.features.nnz, nullptr,
          predictors.of(precision).model_set().host_build_rates, &p.features, precision);
      spmvd::AccuracyPoint& point = out.points[*index];
      try {
        point.ranked_ms =
            point.predicted_ms +
            (spmvd::is_baseline_candidate(candidate) ? 0.0 : builds.build_ms(candidate)) /
                static_cast<double>(options.expected_multiplies);
      } catch (const spmvd::Error& e) {
        // As in predict_measured: features this build's format no longer reads, not judged.
        ++out.unpredicted[p.format_name + ": " + e.what()];
        out.points.erase(out.points.begin() + static_cast<std::ptrdiff_t>(*index));
      }
    }
  }
  std::fprintf(stderr, "  %zu predictions from %s\n", out.points.size(),
               options.samples_path.c_str());
  return out;
}

int run(const Options& options) {
  std::string signature;
  nlohmann::json bench;
  if (!options.bench_path.empty()) {
    bench = nlohmann::json::parse(read_file(options.bench_path));
    signature = bench.at("device").at("signature").get<std::string>();
  } else {
    signature = nlohmann::json::parse(read_file(options.calibration_path))
                    .at("device_signature")
                    .get<std::string>();
  }
  const spmvd::DeviceCalibration calibration =
      spmvd::device_calibration_from_json(read_file(options.calibration_path), signature);
  const spmvd::DeviceInfo& device = calibration.device;
  const Predictors predictors(calibration, options.without);
  auto [points, unpredicted, not_offered] =
      options.bench_path.empty() ? from_samples(options, signature, device, predictors)
                                 : from_bench(options, bench, device, predictors);
  if (points.empty())
    throw spmvd::Error(spmvd::ErrorCode::failed_precondition, "no candidate could be predicted");

  const spmvd::AccuracyReport report = spmvd::summarize_accuracy(points, options.tolerance);
  std::string markdown = spmvd::accuracy_markdown(report);
  if (!unpredicted.empty()) {
    markdown += "\nNot predicted:\n\n";
    for (const auto& [reason, count] : unpredicted)
      markdown += "- " + std::to_string(count) + " x " + reason + "\n";
  }
  if (!not_offered.empty()) {
    markdown += "\nMeasured but no longer offered by the format's rules (not ranked):\n\n";
    for (const auto& [format, count] : not_offered)
      markdown += "- " + std::to_string(count) + " x " + format + "\n";
  }
  std::cout << markdown;
  if (!options.markdown_path.empty()) spmvd::write_text_file(options.markdown_path, markdown);
  if (!options.json_path.empty()) {
    nlohmann::json j = spmvd::accuracy_to_json(report);
    j["device_signature"] = signature;
    j["calibration"] = options.calibration_path;
    j["bench"] = options.bench_path;
    if (!options.samples_path.empty()) j["samples"] = options.samples_path;
    nlohmann::json skipped = nlohmann::json::object();
    for (const auto& [reason, count] : unpredicted) skipped[reason] = count;
    j["not_predicted"] = skipped;
    j["not_offered"] = not_offered;
    nlohmann::json predictions = nlohmann::json::array();
    for (const auto& p : points)
      predictions.push_back({{"matrix", p.matrix},
                             {"precision", std::string(to_string(p.precision))},
                             {"format", p.format},
                             {"family", p.family},
                             {"candidate", p.candidate},
                             {"predicted_ms", p.predicted_ms},
                             {"measured_ms", p.measured_ms}});
    j["predictions"] = predictions;
    spmvd::write_text_file(options.json_path, j.dump(2) + "\n");
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Compare a device calibration's predictions with spmv-bench's measurements"};
  Options options;
  if (const char* bundle = std::getenv("BUNDLE_DATA")) options.data_dir = bundle;
  app.add_option("--calibration", options.calibration_path,
                 "device calibration JSON (spmv-calibrate --out)")
      ->required();
  auto* bench = app.add_option("--bench", options.bench_path,
                               "spmv-bench --json output of the same device");
  auto* samples = app.add_option("--samples", options.samples_path,
                                 "a daemon's plan database: judge the tuner's stored samples");
  bench->excludes(samples);
  samples->excludes(bench);
  app.add_option("--expected-multiplies", options.expected_multiplies,
                 "with --samples: charge builds as the tuner ranks them (0: prediction alone)")
      ->needs(samples);
  app.add_option("--data-dir", options.data_dir,
                 "where the benchmark's relative paths are (default $BUNDLE_DATA)");
  app.add_option("--markdown", options.markdown_path, "also write the markdown tables here");
  app.add_option("--json", options.json_path,
                 "write the summary and every prediction as JSON here");
  app.add_option("--tolerance", options.tolerance,
                 "the model's favourite counts as right within this fraction")
      ->check(CLI::Range(0.0, 10.0))
      ->capture_default_str();
  app.add_option("--without", options.without,
                 "switch off a correction step by name (repeatable; models/correction_steps.cpp)");
  CLI11_PARSE(app, argc, argv);
  if (options.bench_path.empty() && options.samples_path.empty()) {
    std::fprintf(stderr, "model-accuracy: give --bench or --samples\n");
    return 2;
  }
  try {
    return run(options);
  } catch (const spmvd::Error& e) {
    std::fprintf(stderr, "model-accuracy: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "model-accuracy: %s\n", e.what());
    return 1;
  }
}
