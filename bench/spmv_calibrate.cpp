// spmv-calibrate: calibrates the performance models of paper 004 on this device for fp32 and
// fp64 (models/device_calibration.hpp), prints the plan, per-stage progress and timings and
// every fit's residuals, and writes the DeviceCalibration JSON that the daemon stores per
// device signature.
//
//   spmv-calibrate --out calibration.json --plots plots/      (GPU 0, or the CPU without one)
//   spmv-calibrate --plan-only                                (what it would run, and its size)

#include <CLI/CLI.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>

#include "core/error.hpp"
#include "kernels/device.hpp"
#include "kernels/format_registry.hpp"
#include "models/calibration.hpp"
#include "models/device_calibration.hpp"
#include "models/model_plots.hpp"
#include "models/model_set.hpp"
#include "models/svg_plot.hpp"

namespace {

struct Options {
  std::string device = "auto";
  std::string out_path;
  std::string plots_dir;
  bool plan_only = false;
  bool verbose = false;
  spmvd::CalibrationOptions calibration;
};

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

std::unique_ptr<spmvd::Device> open_device(const std::string& which) {
  const bool have_gpu = spmvd::cuda_device_count() > 0;
  if (which == "gpu" || (which == "auto" && have_gpu)) return spmvd::make_cuda_device(0);
  return spmvd::make_cpu_device();
}

// In the order calibration runs them (models/calibration.cpp).
constexpr spmvd::CalibrationStage kStages[] = {
    spmvd::CalibrationStage::csr_vector, spmvd::CalibrationStage::ell,
    spmvd::CalibrationStage::coo,        spmvd::CalibrationStage::bytes,
    spmvd::CalibrationStage::format_bytes, spmvd::CalibrationStage::latency};

void print_plan(const spmvd::CalibrationPlan& plan) {
  std::printf("%s plan: largest sample %lld non-zeros\n",
              std::string(to_string(plan.precision)).c_str(),
              static_cast<long long>(plan.max_sample_nnz));
  std::int64_t generated = 0, built = 0;
  for (const auto stage : kStages) {
    std::size_t variants = 0, assumed = 0;
    for (const auto& v : plan.variants) {
      if (v.stage != stage) continue;
      ++variants;
      if (!v.registers_measured && v.kernel.resources.threads_per_block > 0) ++assumed;
    }
    if (variants == 0) continue;
    generated += plan.generated_nnz(stage);
    built += plan.built_nnz(stage);
    std::printf(
        "  %-12s %3zu variants, %4zu samples, %7.1f M non-zeros generated, %8.1f M built%s\n",
        std::string(to_string(stage)).c_str(), variants, plan.sample_count(stage),
        static_cast<double>(plan.generated_nnz(stage)) / 1e6,
        static_cast<double>(plan.built_nnz(stage)) / 1e6,
        assumed > 0 ? (" (" + std::to_string(assumed) + " with assumed registers)").c_str() : "");
  }
  std::printf("  total      %.1f M non-zeros generated on the host, %.1f M built on the device\n",
              static_cast<double>(generated) / 1e6, static_cast<double>(built) / 1e6);
  for (const auto& v : plan.variants) {
    if (v.stage != spmvd::CalibrationStage::csr_vector) continue;
    std::printf("    csr_vector t=%-2d block=%-3d registers=%d%s strip=%lld rows x %lld strips\n",
                v.kernel.threads_per_row, v.kernel.resources.threads_per_block,
                v.kernel.resources.registers_per_thread, v.registers_measured ? "" : " (assumed)",
                static_cast<long long>(v.rows_per_strip), static_cast<long long>(v.sample_strips));
  }
}

std::string variant_text(const nlohmann::json& fit) {
  if (!fit.contains("variant")) return "-";
  const auto& v = fit["variant"];
  std::string text;
  if (v.at("threads_per_row").get<int>() > 0)
    text += "t=" + std::to_string(v["threads_per_row"].get<int>()) + " ";
  if (v.at("block_size").get<int>() > 0)
    text += "block=" + std::to_string(v["block_size"].get<int>());
  return text.empty() ? "-" : text;
}

// Every fit's residuals over its samples (model_set_summary's "quality").
void print_fits(const spmvd::ModelSet& set) {
  const nlohmann::json summary = spmvd::model_set_summary(set);
  std::printf("%s fits (relative residuals over the samples):\n",
              std::string(to_string(set.precision)).c_str());
  std::printf("  %-12s %-16s %-18s %7s %9s %9s\n", "family", "variant", "curve", "samples", "rms",
              "max");
  for (const auto& fit : summary.at("fits")) {
    if (fit.at("family") == "cache_resident") continue;  // ratios, printed below
    const auto& q = fit.at("quality");
    std::printf("  %-12s %-16s %-18s %7zu %8.2f%% %8.2f%%",
                fit.at("family").get<std::string>().c_str(), variant_text(fit).c_str(),
                fit.at("curve").get<std::string>().c_str(), q.at("sample_count").get<std::size_t>(),
                100.0 * q.at("rms_relative_error").get<double>(),
                100.0 * q.at("max_relative_error").get<double>());
    if (fit.contains("threshold_x"))
      std::printf("  threshold c=%g", fit["threshold_x"].get<double>());
    if (fit.contains("bandwidth_bytes_per_ms"))
      std::printf("  %.1f GB/s, overhead %.4f ms",
                  fit["bandwidth_bytes_per_ms"].get<double>() / 1e6,
                  fit.at("intercept").get<double>());
    if (fit.contains("format")) std::printf("  format id %d", fit["format"].get<int>());
    // Banded / random time (models/locality.hpp): the x-locality term of the family.
    if (fit.contains("banded_ratio") && !fit["banded_ratio"].empty()) {
      std::printf("  banded/random");
      for (const auto& point : fit["banded_ratio"])
        std::printf(" %g:%.2f", point.at(0).get<double>(), point.at(1).get<double>());
    }
    // ELL's, per width and rows.
    if (fit.contains("banded_ratio_vs_width_rows")) {
      std::printf("  banded/random width x rows");
      for (const auto& point : fit["banded_ratio_vs_width_rows"])
        std::printf(" %gx%g:%.2f", point.at("width").get<double>(),
                    point.at("rows").get<double>(), point.at("ratio").get<double>());
    }
    std::printf("\n");
  }
  if (set.cache_resident.empty()) return;
  std::printf("%s cache-resident corrections (measured / predicted at rows x row length):\n",
              std::string(to_string(set.precision)).c_str());
  for (const spmvd::CacheResidentCorrection& c : set.cache_resident) {
    const spmvd::FormatEntry* entry = spmvd::format_registry().find(c.format);
    std::printf("  %-16s %-28s block=%-4u t=%-3u",
                entry ? std::string(entry->rules->name()).c_str() : "?",
                spmvd::to_string(c.params).c_str(), c.block_size, c.threads_per_row);
    const spmvd::LogGridFit& g = c.ratio_vs_length_rows;
    for (std::size_t r = 0; r < g.rows.size(); ++r)
      for (std::size_t w = 0; w < g.widths.size(); ++w)
        std::printf(" %gx%g:%.2f", g.rows[r], g.widths[w],
                    std::exp(g.log_ms[r * g.widths.size() + w]));
    std::printf("\n");
  }
}

void write_plots(const spmvd::DeviceCalibration& calibration, const std::string& dir) {
  std::filesystem::create_directories(dir);
  std::size_t count = 0;
  for (const auto* set : {&calibration.fp32, &calibration.fp64}) {
    for (const auto& plot : spmvd::model_set_plots(*set)) {
      spmvd::write_text_file((std::filesystem::path(dir) / plot.file_name).string(), plot.svg);
      ++count;
    }
  }
  std::printf("wrote %zu plots to %s\n", count, dir.c_str());
}

int run(const Options& options) {
  const auto start = Clock::now();
  auto device = open_device(options.device);
  const auto& info = device->info();
  std::printf("device: %s (%s), %d %s, L2 %.1f MB\nsignature: %s\n", info.name.c_str(),
              info.is_gpu ? "GPU" : "CPU", info.sm_count, info.is_gpu ? "SMs" : "threads",
              static_cast<double>(info.l2_bytes) / 1e6, info.signature().c_str());
  const auto& registry = spmvd::format_registry();
  for (const auto precision : {spmvd::Precision::fp32, spmvd::Precision::fp64})
    print_plan(spmvd::plan_calibration(registry, info, precision, options.calibration));
  if (options.plan_only) return 0;

  // A line at each quarter of a stage and one when it ends (with --verbose, one per sample).
  const auto on_progress = [&](const spmvd::CalibrationProgress& p) {
    const bool quarter = p.total >= 4 && p.done % (p.total / 4) == 0 && p.done < p.total;
    if ((options.verbose || quarter) && p.detail != "fitted")
      std::printf("  [%s %zu/%zu, %.1f s] %s\n", p.stage.c_str(), p.done, p.total,
                  p.stage_elapsed_s, p.detail.c_str());
    if (p.detail == "fitted")
      std::printf("%-16s %4zu samples timed and fitted in %6.2f s (total %.1f s)\n",
                  p.stage.c_str(), p.total, p.stage_elapsed_s, seconds_since(start));
    std::fflush(stdout);
  };
  const spmvd::DeviceCalibration calibration =
      spmvd::calibrate_device(registry, *device, options.calibration, on_progress);
  std::printf("calibrated both precisions in %.1f s\n", seconds_since(start));
  print_fits(calibration.fp32);
  print_fits(calibration.fp64);

  if (!options.out_path.empty()) {
    spmvd::write_text_file(options.out_path, spmvd::device_calibration_to_json(calibration));
    std::printf("wrote %s (model_version %d)\n", options.out_path.c_str(), spmvd::kModelVersion);
  }
  if (!options.plots_dir.empty()) write_plots(calibration, options.plots_dir);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Calibrate the SpMV performance models (paper 004) on this device, fp32 and fp64"};
  Options options;
  auto& c = options.calibration;
  app.add_option("--out", options.out_path, "write the device calibration JSON here");
  app.add_option("--plots", options.plots_dir, "write one SVG per fit into this directory");
  app.add_option("--device", options.device, "auto (GPU 0 if present), gpu or cpu")
      ->check(CLI::IsMember({"auto", "gpu", "cpu"}))
      ->capture_default_str();
  app.add_option("--warmup-runs", c.warmup_runs, "untimed applies per sample")
      ->check(CLI::Range(0, 1000))
      ->capture_default_str();
  app.add_option("--timed-runs", c.timed_runs, "timed applies per sample (median)")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  app.add_option("--max-sample-nnz", c.max_sample_nnz,
                 "non-zeros of the largest sample (0: 4x L2 worth of fp64 CSR, in [2^16, 2^25])")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--size-steps", c.size_steps, "COO and bytes: doubling sizes up to the largest")
      ->check(CLI::Range(2, 30))
      ->capture_default_str();
  app.add_flag("--plan-only", options.plan_only, "print what would be timed, and stop");
  app.add_flag("--verbose", options.verbose, "print every timed sample");
  CLI11_PARSE(app, argc, argv);
  if (options.out_path.empty() && !options.plan_only)
    std::fprintf(stderr, "spmv-calibrate: no --out: the calibration is printed, not saved\n");
  try {
    return run(options);
  } catch (const spmvd::Error& e) {
    std::fprintf(stderr, "spmv-calibrate: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "spmv-calibrate: %s\n", e.what());
    return 1;
  }
}
