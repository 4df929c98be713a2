// spmv: the user CLI of spmvd. `spmv run m.mtx` uploads, tunes, multiplies, and checks the
// result against the double-precision CPU reference.

#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <iostream>
#include <sstream>

#include "client/cli_connection.hpp"
#include "client/spmv_client.hpp"
#include "client/tuning_lines.hpp"
#include "client/vector_io.hpp"
#include "core/error.hpp"
#include "core/matrix_market.hpp"

namespace spmvd {
namespace {

std::string read_file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ErrorCode::not_found, "cannot open '" + path + "'");
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

void print_plan(const v1::TuneReply& reply) {
  const auto& p = reply.plan();
  std::cout << "plan:      " << p.format() << " [" << p.params() << "] [" << p.launch() << "]\n"
            << "measured:  " << p.measured_ms() << " ms per multiply (" << p.candidates_measured()
            << " candidates measured)\n"
            << "cache:     " << (reply.cache_hit() ? "hit" : "miss") << " (" << reply.tune_ms()
            << " ms)\n"
            << tuning_breakdown(p);
}

// max_i |y_i - ref_i| / max_i (sum_k |a_ik x_k|): a relative error that is meaningful for
// rows whose result cancels to near zero.
double relative_error(const CsrMatrix<double>& m, const std::vector<double>& x,
                      const std::vector<double>& y, const std::vector<double>& reference) {
  double worst = 0.0, scale = 0.0;
  for (std::int64_t r = 0; r < m.rows; ++r) {
    double row_scale = 0.0;
    for (auto k = m.row_offsets[r]; k < m.row_offsets[r + 1]; ++k)
      row_scale += std::abs(m.values[k] * x[m.col_indices[k]]);
    scale = std::max(scale, row_scale);
    worst = std::max(worst, std::abs(y[r] - reference[r]));
  }
  return scale > 0 ? worst / scale : worst;
}

int run_command(SpmvClient& client, const std::string& path, Precision precision, bool force,
                std::uint64_t expected_multiplies, int repeat) {
  const auto elapsed_ms = [](std::chrono::steady_clock::time_point since) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - since)
        .count();
  };
  const auto load_start = std::chrono::steady_clock::now();
  const CsrMatrix<double> m = read_matrix_market_file(path);
  const double read_ms = elapsed_ms(load_start);
  const auto upload_start = std::chrono::steady_clock::now();
  const auto info = client.upload(m, precision, path, false, expected_multiplies);
  const double upload_ms = elapsed_ms(upload_start);
  std::cout << "matrix:    " << path << " " << info.rows() << " x " << info.cols() << ", "
            << info.nnz() << " nonzeros, " << to_string(precision) << "\n"
            << "handle:    " << info.handle() << " (read " << read_ms << " ms, upload " << upload_ms
            << " ms)\n";
  // The first multiply does not wait for tuning: it runs on the plan serving at once.
  const auto x = random_vector(m.cols, 42);
  const auto first_start = std::chrono::steady_clock::now();
  const auto first = client.multiply(info.handle(), 1.0, 0.0, {x});
  std::cout << "first:     multiply answered " << elapsed_ms(first_start)
            << " ms after the upload returned (plan " << first.plan().format() << ", "
            << first.device_ms() << " ms on the device)\n";
  const auto tuned = client.tune(info.handle(), force, expected_multiplies);
  print_plan(tuned);

  const auto reply = client.multiply(info.handle(), 1.0, 0.0, {x});
  std::vector<double> reference(static_cast<std::size_t>(m.rows));
  reference_spmv(m, x.data(), reference.data(), 1.0, 0.0);
  const std::vector<double> y(reply.y(0).values().begin(), reply.y(0).values().end());
  const double error = relative_error(m, x, y, reference);
  const double tolerance = precision == Precision::fp32 ? 1e-5 : 1e-12;
  std::cout << "multiply:  " << reply.device_ms() << " ms on the device\n"
            << "check:     relative error " << error << " vs CPU fp64 reference ("
            << (error <= tolerance ? "ok" : "FAILED") << ", tolerance " << tolerance << ")\n";
  if (repeat > 1) {
    // What the tuned plan delivers, as a plan's measured_ms claims it: the median of several
    // Multiply calls' device times (one call alone is at the mercy of clocks and noise).
    std::vector<double> device_ms{reply.device_ms()};
    for (int i = 1; i < repeat; ++i)
      device_ms.push_back(client.multiply(info.handle(), 1.0, 0.0, {x}).device_ms());
    std::sort(device_ms.begin(), device_ms.end());
    std::cout << "delivered: median " << device_ms[device_ms.size() / 2]
              << " ms on the device over " << device_ms.size() << " multiplies (min "
              << device_ms.front() << ", max " << device_ms.back() << ")\n";
  }
  client.release(info.handle());
  return error <= tolerance ? 0 : 3;
}

Precision precision_from(const std::string& text) {
  const auto p = parse_precision(text);
  if (!p) throw_invalid("precision must be fp32 or fp64, got '" + text + "'");
  return *p;
}

}  // namespace
}  // namespace spmvd

int main(int argc, char** argv) {
  using namespace spmvd;
  CLI::App app{"spmv — client of the spmvd SpMV daemon"};
  app.require_subcommand(1);
  app.fallthrough();  // global flags after the subcommand too
  std::string server = "127.0.0.1:50051", precision_text = "fp64";
  app.add_option("--server", server, "daemon address host:port")->capture_default_str();
  ConnectionFlags connection;
  add_connection_flags(app, connection, "SPMV_TOKEN");

  std::string path, handle, x_path, y_out;
  bool force = false, as_text = false;
  std::uint64_t expected_multiplies = 0;
  const std::string expected_help =
      "multiplies you expect to run: sets the tuning budget (0: the daemon's default)";
  auto* run = app.add_subcommand("run", "upload, tune, multiply a random x, check vs CPU");
  run->add_option("matrix", path, ".mtx or .mtx.gz file")->required();
  run->add_option("--precision", precision_text, "fp32 or fp64")->capture_default_str();
  run->add_flag("--force", force, "re-tune even if the plan cache has a plan");
  run->add_option("--expected-multiplies", expected_multiplies, expected_help);
  int repeat = 1;
  run->add_option("--repeat", repeat,
                  "multiply the tuned plan this many times and print the median device time")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();

  auto* upload = app.add_subcommand("upload", "upload a matrix; prints its handle");
  upload->add_option("matrix", path, ".mtx or .mtx.gz file")->required();
  upload->add_option("--precision", precision_text, "fp32 or fp64")->capture_default_str();
  upload->add_flag("--as-text", as_text, "send the file's bytes and let the daemon parse them");
  upload->add_option("--expected-multiplies", expected_multiplies, expected_help);

  auto* tune = app.add_subcommand("tune", "choose (or look up) the plan of an uploaded matrix");
  tune->add_option("handle", handle)->required();
  tune->add_flag("--force", force, "re-tune even if the plan cache has a plan");
  tune->add_option("--expected-multiplies", expected_multiplies,
                   "re-tune with a wider budget when larger than the upload's hint");

  auto* multiply = app.add_subcommand("multiply", "y = A x with x from a file or random");
  multiply->add_option("handle", handle)->required();
  multiply->add_option("--x", x_path, "vector file (default: random, seed 42)");
  multiply->add_option("--out", y_out, "write y here (default: print a summary)");

  auto* release = app.add_subcommand("release", "free a resident matrix");
  release->add_option("handle", handle)->required();
  auto* list = app.add_subcommand("list", "resident matrices");

  CLI11_PARSE(app, argc, argv);
  try {
    ClientOptions options;
    options.connection = resolve(connection, "SPMV_TOKEN");
    SpmvClient client(server, options);
    if (*run)
      return run_command(client, path, precision_from(precision_text), force, expected_multiplies,
                         repeat);
    if (*upload) {
      const Precision p = precision_from(precision_text);
      const auto info =
          as_text ? client.upload_matrix_market(read_file_bytes(path), p, path, false,
                                                expected_multiplies)
                  : client.upload(read_matrix_market_file(path), p, path, false,
                                  expected_multiplies);
      std::cout << info.handle() << "\n";
    } else if (*tune) {
      print_plan(client.tune(handle, force, expected_multiplies));
    } else if (*multiply) {
      const auto matrices = client.list();
      std::int64_t cols = -1;
      for (const auto& m : matrices)
        if (m.handle() == handle) cols = m.cols();
      if (cols < 0) throw Error(ErrorCode::not_found, "no resident matrix has handle '" + handle + "'");
      const auto x = x_path.empty() ? random_vector(cols, 42) : read_vector_file(x_path);
      const auto reply = client.multiply(handle, 1.0, 0.0, {x});
      const std::vector<double> y(reply.y(0).values().begin(), reply.y(0).values().end());
      if (!y_out.empty()) write_vector_file(y_out, y);
      double norm = 0.0;
      for (double v : y) norm += v * v;
      std::cout << "y: " << y.size() << " entries, 2-norm " << std::sqrt(norm) << ", "
                << reply.device_ms() << " ms on the device, plan " << reply.plan().format() << "\n";
    } else if (*release) {
      client.release(handle);
    } else if (*list) {
      for (const auto& m : client.list())
        std::cout << m.handle() << "  " << m.rows() << " x " << m.cols() << "  " << m.nnz()
                  << " nnz  " << (m.precision() == v1::FP32 ? "fp32" : "fp64") << "  "
                  << m.name() << "\n";
    }
    return 0;
  } catch (const RpcError& e) {
    std::cerr << "spmv: daemon said " << status_name(e.code()) << ": " << e.what() << "\n";
    return 2;
  } catch (const Error& e) {
    std::cerr << "spmv: " << e.what() << "\n";
    return 2;
  }
}
