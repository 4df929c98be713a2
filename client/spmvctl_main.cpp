// spmvctl: the admin CLI of spmvd — calibrate the performance models, inspect and plot them,
// list, show, delete, export and import plans, list the formats, show the daemon's statistics.
// Tables for people; --json prints the reply as JSON for scripts; progress goes to stderr.

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <optional>

#include <google/protobuf/util/json_util.h>

#include "client/admin_client.hpp"
#include "client/tuning_lines.hpp"
#include "client/cli_connection.hpp"
#include "client/model_table.hpp"
#include "client/refit_table.hpp"
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

// The daemon's models reply; refuses an uncalibrated daemon.
auto calibrated_models(AdminClient& admin) {
  auto reply = admin.show_models();
  if (!reply.calibrated())
    throw Error(ErrorCode::failed_precondition,
                "the daemon on " + reply.device() + " has no calibration; run `spmvctl calibrate`");
  return reply;
}

DeviceCalibration fetch_calibration(AdminClient& admin) {
  const auto reply = calibrated_models(admin);
  return device_calibration_from_json(reply.calibration_json(), reply.device());
}

// The calibration as the daemon stores it, checked to decode (what spmv-bench --calibration
// and model-accuracy read).
std::string fetch_calibration_json(AdminClient& admin) {
  const auto reply = calibrated_models(admin);
  device_calibration_from_json(reply.calibration_json(), reply.device());
  return reply.calibration_json();
}

// Per precision the tables each family's record makes (client/model_table.hpp; formats named by
// this build's registry); with --json the two summaries (fp32, fp64) as model_set_summary
// writes them, in an array.
void show_models(AdminClient& admin, bool json) {
  const DeviceCalibration calibration = fetch_calibration(admin);
  if (json) {
    std::cout << nlohmann::json::array(
                     {model_set_summary(calibration.fp32), model_set_summary(calibration.fp64)})
                     .dump(2)
              << "\n";
    return;
  }
  for (const ModelSet* set : {&calibration.fp32, &calibration.fp64})
    std::cout << (set == &calibration.fp32 ? "" : "\n") << model_tables(model_set_summary(*set));
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

std::string precision_name(v1::Precision p) { return p == v1::FP32 ? "fp32" : "fp64"; }

void print_json(const google::protobuf::Message& message) {
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  std::string text;
  if (!google::protobuf::util::MessageToJsonString(message, &text, options).ok())
    throw Error(ErrorCode::internal, "cannot print the reply as JSON");
  std::cout << text << "\n";
}

void print_plan_table(const std::vector<v1::StoredPlan>& plans) {
  std::cout << std::left << std::setw(34) << "fingerprint" << std::setw(6) << "prec"
            << std::setw(18) << "format" << std::setw(12) << "ms" << std::setw(40)
            << "tuning (mode, k, cost)" << "launch / params\n";
  for (const auto& p : plans) {
    std::cout << std::setw(34) << p.fingerprint() << std::setw(6) << precision_name(p.precision())
              << std::setw(18) << p.plan().format() << std::setw(12) << p.plan().measured_ms()
              << std::setw(40) << tuning_summary(p.plan()) << p.plan().launch() << " / "
              << p.plan().params() << "\n";
  }
}

void list_plans(AdminClient& admin, std::uint32_t limit, bool json) {
  const auto plans = admin.list_plans(limit);
  if (!json) return print_plan_table(plans);
  v1::ListPlansReply reply;
  reply.mutable_plans()->Add(plans.begin(), plans.end());
  print_json(reply);
}

v1::PlanKey plan_key(const std::string& fingerprint, const std::string& precision,
                     const std::string& device) {
  v1::PlanKey key;
  key.set_fingerprint(fingerprint);
  key.set_device(device);
  if (!precision.empty()) {
    const auto p = parse_precision(precision);
    if (!p) throw_invalid("--precision must be fp32 or fp64, got '" + precision + "'");
    key.set_precision(*p == Precision::fp32 ? v1::FP32 : v1::FP64);
  }
  return key;
}

void show_plan(AdminClient& admin, const v1::PlanKey& key, bool json) {
  const auto plans = admin.get_plan(key);
  v1::GetPlanReply reply;
  reply.mutable_plans()->Add(plans.begin(), plans.end());
  if (json) return print_json(reply);
  for (const auto& p : plans) {
    std::cout << "fingerprint:   " << p.fingerprint() << "\n"
              << "device:        " << p.device() << "\n"
              << "precision:     " << precision_name(p.precision()) << "\n"
              << "tuner version: " << p.tuner_version() << "\n"
              << "model version: " << p.model_version() << "\n"
              << "format:        " << p.plan().format() << " (id " << p.plan().format_id() << ")\n"
              << "params:        " << p.plan().params() << "\n"
              << "launch:        " << p.plan().launch() << "\n"
              << "measured:      " << p.plan().measured_ms() << " ms (predicted "
              << p.plan().predicted_ms() << " ms, " << p.plan().candidates_measured()
              << " candidates measured)\n"
              << tuning_breakdown(p.plan())
              << "plan JSON:     " << p.plan().plan_json() << "\n";
  }
}

void export_plans(AdminClient& admin, const std::string& out_path) {
  std::ofstream file;
  if (!out_path.empty()) {
    file.open(out_path);
    if (!file) throw Error(ErrorCode::failed_precondition, "cannot write " + out_path);
  }
  std::ostream& out = out_path.empty() ? std::cout : file;
  std::uint64_t count = 0;
  admin.export_plans([&](const v1::PlanLine& line) {
    out << line.json() << "\n";
    if (++count % 1000 == 0) std::cerr << "\rexported " << count << " plans" << std::flush;
  });
  std::cerr << "\rexported " << count << " plans" << (out_path.empty() ? "" : " to " + out_path)
            << "\n";
}

// Returns the exit status: 0 when every line was imported, 1 when some were refused.
int import_plans(AdminClient& admin, const std::string& in_path, bool json) {
  std::ifstream in(in_path);
  if (!in) throw Error(ErrorCode::not_found, "cannot read " + in_path);
  std::uint64_t number = 0;
  const auto reply = admin.import_plans([&](v1::PlanLine& line) {
    std::string text;
    if (!std::getline(in, text)) return false;
    line.set_json(std::move(text));
    line.set_line_number(++number);
    if (number % 1000 == 0) std::cerr << "\rsent " << number << " lines" << std::flush;
    return true;
  });
  if (json) {
    print_json(reply);
  } else {
    for (const auto& problem : reply.problems())
      std::cerr << in_path << ":" << problem.line_number() << ": " << problem.message() << "\n";
    std::cerr << "imported " << reply.imported() << " plans from " << number << " lines of "
              << in_path << "; " << reply.problems_size() << " refused\n";
  }
  return reply.problems().empty() ? 0 : 1;
}

// Exit status 0 when a precision's refit was installed, 1 when every one was refused.
int refit_models(AdminClient& admin, bool json) {
  const auto reply = admin.refit_models();
  if (json)
    print_json(reply);
  else
    std::cout << refit_tables(reply);
  for (const auto& p : reply.precisions())
    if (p.installed()) return 0;
  return 1;
}

void list_formats(AdminClient& admin, bool json) {
  const auto reply = admin.list_formats();
  if (json) return print_json(reply);
  std::cout << "device: " << reply.device() << "\n"
            << std::left << std::setw(5) << "id" << std::setw(18) << "name" << std::setw(11)
            << "needs GPU" << "usable here\n";
  for (const auto& f : reply.formats())
    std::cout << std::setw(5) << f.id() << std::setw(18) << f.name() << std::setw(11)
              << (f.needs_gpu() ? "yes" : "no") << (f.usable_here() ? "yes" : "no") << "\n";
}

void show_stats(AdminClient& admin, bool json) {
  const auto s = admin.get_stats();
  if (json) return print_json(s);
  std::cout << "device:   " << s.device() << "\n"
            << "uptime:   " << std::fixed << std::setprecision(1) << s.uptime_s() << " s\n"
            << "models:   "
            << (s.calibrating() ? "calibrating" : s.calibrated() ? "calibrated" : "not calibrated")
            << "\n"
            << "resident: " << s.matrices_size() << " matrices, " << s.resident_device_bytes()
            << " of " << s.memory_budget_bytes() << " budget device bytes\n"
            << "plan cache: " << s.plan_cache_hits() << " hits, " << s.plan_cache_misses()
            << " misses; tuning " << std::setprecision(3) << s.tuning_ms_total() / 1000.0
            << " s in all (" << std::setprecision(0) << s.tuning_spmv_equivalents_total()
            << " SpMV-equivalents)\n";
  for (const auto& tier : s.plan_store_tiers()) {
    std::cout << "plan store " << tier.tier() << ": " << tier.hits() << " hits, " << tier.misses()
              << " misses";
    if (tier.tier() == "cluster")
      std::cout << (s.cluster_store_available() ? " (available)" : " (unavailable)");
    std::cout << "\n";
  }
  if (s.matrices_size() > 0) {
    std::cout << "\n" << std::left << std::setw(34) << "handle" << std::setw(22) << "rows x cols"
              << std::setw(12) << "nnz" << std::setw(6) << "prec" << std::setw(18) << "format"
              << "device bytes\n";
    for (const auto& m : s.matrices())
      std::cout << std::setw(34) << m.matrix().handle() << std::setw(22)
                << (std::to_string(m.matrix().rows()) + " x " + std::to_string(m.matrix().cols()))
                << std::setw(12) << m.matrix().nnz() << std::setw(6)
                << precision_name(m.matrix().precision()) << std::setw(18)
                << (m.format().empty() ? "(not tuned)" : m.format()) << m.device_bytes() << "\n";
  }
  std::cout << "\n" << std::left << std::setw(36) << "rpc" << std::right << std::setw(8) << "calls"
            << std::setw(8) << "errors" << std::setw(11) << "mean ms" << std::setw(11) << "max ms"
            << std::setw(14) << "received B" << "\n";
  for (const auto& r : s.rpcs())
    std::cout << std::left << std::setw(36) << r.method() << std::right << std::setw(8)
              << r.calls() << std::setw(8) << r.errors() << std::setw(11) << std::setprecision(2)
              << r.mean_ms() << std::setw(11) << r.max_ms() << std::setw(14) << r.received_bytes()
              << "\n";
}

}  // namespace
}  // namespace spmvd

int main(int argc, char** argv) {
  using namespace spmvd;
  CLI::App app{"spmvctl — administer an spmvd daemon"};
  app.require_subcommand(1);
  app.fallthrough();  // `spmvctl stats --json` as well as `spmvctl --json stats`
  std::string server = "127.0.0.1:50051", out_dir, out_path, in_path, fingerprint, precision,
              device;
  std::uint32_t limit = 50;
  bool json = false;
  app.add_option("--server", server, "daemon address host:port")->capture_default_str();
  app.add_flag("--json", json, "print replies as JSON (for scripts)");
  ConnectionFlags connection;
  add_connection_flags(app, connection, "SPMVCTL_TOKEN");
  auto* calibrate = app.add_subcommand("calibrate", "re-run the calibration micro-benchmarks");
  auto* model = app.add_subcommand("model", "the calibrated performance models");
  model->require_subcommand(1);
  auto* show = model->add_subcommand(
      "show", "per precision, a table per format family: each fit's coefficients, sample count, "
              "error on its samples (--json: the summaries as JSON)");
  auto* plot = model->add_subcommand("plot", "draw each fit (samples and curve) as SVG");
  auto* refit = model->add_subcommand(
      "refit", "refit the per-format measured_refit factors from the tuner's stored samples; "
               "prints held-out accuracy before and after, installs them unless that is worse "
               "(exit 1 when every precision's refit is refused)");
  auto* model_export = model->add_subcommand(
      "export", "the daemon's calibration as JSON (what spmv-calibrate --out writes: spmv-bench "
                "--calibration and model-accuracy read it)");
  plot->add_option("--out", out_dir, "directory for the pictures")->required();

  auto* plans = app.add_subcommand("plans", "the plan cache (alone: list, most recent first)");
  plans->require_subcommand(0, 1);
  plans->add_option("--limit", limit)->capture_default_str();
  auto* plans_list = plans->add_subcommand("list", "stored plans, most recent first");
  plans_list->add_option("--limit", limit)->capture_default_str();
  const auto add_key_options = [&](CLI::App* command) {
    command->add_option("fingerprint", fingerprint, "the matrix's structural fingerprint")->required();
    command->add_option("--precision", precision, "fp32 or fp64 (default: both)");
    command->add_option("--device", device, "device signature (default: the daemon's)");
  };
  auto* plans_show = plans->add_subcommand("show", "one matrix's stored plans in full");
  add_key_options(plans_show);
  auto* plans_delete = plans->add_subcommand("delete", "drop a matrix's stored plans");
  add_key_options(plans_delete);
  auto* plans_export = plans->add_subcommand("export", "every stored plan as JSON lines");
  plans_export->add_option("--out", out_path, "file to write (default: stdout)");
  auto* plans_import = plans->add_subcommand("import", "store the plans of a JSON-lines export");
  plans_import->add_option("file", in_path, "JSON lines from `plans export`")->required();
  auto* formats = app.add_subcommand("formats", "the formats compiled into the daemon");
  auto* stats = app.add_subcommand("stats", "resident matrices, requests, plan cache, tuning");
  CLI11_PARSE(app, argc, argv);

  try {
    AdminClient admin(server, resolve(connection, "SPMVCTL_TOKEN"));
    if (*calibrate) {
      admin.calibrate(draw_progress_bar);
    } else if (*show) {
      show_models(admin, json);
    } else if (*refit) {
      return refit_models(admin, json);
    } else if (*plot) {
      write_plots(fetch_calibration(admin), out_dir);
    } else if (*model_export) {
      std::cout << fetch_calibration_json(admin) << "\n";
    } else if (*plans_show) {
      show_plan(admin, plan_key(fingerprint, precision, device), json);
    } else if (*plans_delete) {
      const auto deleted = admin.delete_plan(plan_key(fingerprint, precision, device));
      std::cerr << "deleted " << deleted << " plan" << (deleted == 1 ? "" : "s") << "\n";
      if (deleted == 0) return 1;
    } else if (*plans_export) {
      export_plans(admin, out_path);
    } else if (*plans_import) {
      return import_plans(admin, in_path, json);
    } else if (*plans) {
      list_plans(admin, limit, json);
    } else if (*formats) {
      list_formats(admin, json);
    } else if (*stats) {
      show_stats(admin, json);
    }
    return 0;
  } catch (const RpcError& e) {
    std::cerr << "spmvctl: daemon said " << status_name(e.code()) << ": " << e.what() << "\n";
    return 2;
  } catch (const Error& e) {
    std::cerr << "spmvctl: " << e.what() << "\n";
    return 2;
  }
}
