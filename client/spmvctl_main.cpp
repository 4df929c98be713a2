// spmvctl: the admin CLI of spmvd — calibrate the performance models, inspect and plot them,
// list the plan cache.

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>

#include "client/admin_client.hpp"
#include "client/spmv_client.hpp"
#include "core/error.hpp"
#include "models/device_calibration.hpp"
#include "models/model_plots.hpp"
#include "models/model_set.hpp"

namespace spmvd {
namespace {

void draw_progress_bar(const v1::CalibrateProgress& p) {
  constexpr int kWidth = 30;
  const double fraction = p.total() ? static_cast<double>(p.done()) / static_cast<double>(p.total()) : 0.0;
  const int filled = static_cast<int>(fraction * kWidth);
  std::fprintf(stderr, "\r[%s%s] %3.0f%% %6.1f s  %-40.40s", std::string(filled, '#').c_str(),
               std::string(kWidth - filled, ' ').c_str(), 100.0 * fraction, p.elapsed_s(),
               p.stage().c_str());
  if (p.finished()) std::fprintf(stderr, "\n");
  std::fflush(stderr);
}

DeviceCalibration fetch_calibration(AdminClient& admin) {
  const auto reply = admin.show_models();
  if (!reply.calibrated())
    throw Error(ErrorCode::failed_precondition,
                "the daemon on " + reply.device() + " has no calibration; run `spmvctl calibrate`");
  return device_calibration_from_json(reply.calibration_json(), reply.device());
}

void print_fit(const nlohmann::json& fit) {
  std::cout << "  " << fit.value("family", "?");
  if (fit.contains("variant")) std::cout << " " << fit["variant"].dump();
  std::cout << "  " << fit.value("curve", "") << " (" << fit.value("kind", "") << ")\n    ";
  for (const auto& [key, value] : fit.items()) {
    if (key == "family" || key == "variant" || key == "curve" || key == "kind" || key == "quality")
      continue;
    std::cout << key << "=" << value.dump() << "  ";
  }
  if (fit.contains("quality")) {
    const auto& q = fit["quality"];
    std::cout << "\n    samples=" << q.value("sample_count", 0) << "  rms_rel_err="
              << q.value("rms_relative_error", 0.0) << "  max_rel_err="
              << q.value("max_relative_error", 0.0);
  }
  std::cout << "\n";
}

void show_models(AdminClient& admin) {
  const DeviceCalibration calibration = fetch_calibration(admin);
  for (const ModelSet* set : {&calibration.fp32, &calibration.fp64}) {
    const nlohmann::json summary = model_set_summary(*set);
    std::cout << to_string(set->precision) << " models (model version "
              << summary.value("model_version", 0) << ", " << set->device_signature << ")\n";
    for (const auto& fit : summary.value("fits", nlohmann::json::array())) print_fit(fit);
    for (const char* extra : {"blocked_ell", "cpu_gpu"})
      if (summary.contains(extra)) std::cout << "  " << extra << ": " << summary[extra].dump() << "\n";
  }
}

void write_plots(const DeviceCalibration& calibration, const std::string& out_dir) {
  std::filesystem::create_directories(out_dir);
  for (const ModelSet* set : {&calibration.fp32, &calibration.fp64}) {
    for (const NamedSvg& picture : model_set_plots(*set)) {
      const std::string path = out_dir + "/" + picture.file_name;
      std::ofstream(path) << picture.svg;
      std::cout << path << "\n";
    }
  }
}

void list_plans(AdminClient& admin, std::uint32_t limit) {
  std::cout << std::left << std::setw(34) << "fingerprint" << std::setw(6) << "prec"
            << std::setw(18) << "format" << std::setw(12) << "ms" << "launch / params\n";
  for (const auto& p : admin.list_plans(limit)) {
    std::cout << std::setw(34) << p.fingerprint() << std::setw(6)
              << (p.precision() == v1::FP32 ? "fp32" : "fp64") << std::setw(18)
              << p.plan().format() << std::setw(12) << p.plan().measured_ms() << p.plan().launch()
              << " / " << p.plan().params() << "\n";
  }
}

}  // namespace
}  // namespace spmvd

int main(int argc, char** argv) {
  using namespace spmvd;
  CLI::App app{"spmvctl — administer an spmvd daemon"};
  app.require_subcommand(1);
  std::string server = "127.0.0.1:50051", out_dir;
  std::uint32_t limit = 50;
  app.add_option("--server", server, "daemon address host:port")->capture_default_str();
  auto* calibrate = app.add_subcommand("calibrate", "re-run the calibration micro-benchmarks");
  auto* model = app.add_subcommand("model", "the calibrated performance models");
  model->require_subcommand(1);
  auto* show = model->add_subcommand("show", "each fit's coefficients, residuals, sample count");
  auto* plot = model->add_subcommand("plot", "draw each fit (samples and curve) as SVG");
  plot->add_option("--out", out_dir, "directory for the pictures")->required();
  auto* plans = app.add_subcommand("plans", "the plan cache, most recent first");
  plans->add_option("--limit", limit)->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  try {
    AdminClient admin(server);
    if (*calibrate) {
      admin.calibrate(draw_progress_bar);
    } else if (*show) {
      show_models(admin);
    } else if (*plot) {
      write_plots(fetch_calibration(admin), out_dir);
    } else if (*plans) {
      list_plans(admin, limit);
    }
    return 0;
  } catch (const RpcError& e) {
    std::cerr << "spmvctl: daemon said " << static_cast<int>(e.code()) << ": " << e.what() << "\n";
    return 2;
  } catch (const Error& e) {
    std::cerr << "spmvctl: " << e.what() << "\n";
    return 2;
  }
}
