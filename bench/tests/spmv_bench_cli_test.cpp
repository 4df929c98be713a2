// Runs the real spmv-bench binary on the CPU device and reads what it wrote, as a user would.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "bench/byte_model.hpp"
#include "core/precision.hpp"

namespace spmvd {
namespace {

using ::testing::HasSubstr;

struct CommandResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr
};

CommandResult run_command(const std::string& arguments) {
  const std::string command = std::string(SPMV_BENCH_PATH) + " " + arguments + " 2>&1";
  CommandResult result;
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return result;
  char buffer[4096];
  while (std::fgets(buffer, sizeof buffer, pipe)) result.output += buffer;
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

std::filesystem::path temp_dir() {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("spmv_bench_cli_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return dir;
}

TEST(SpmvBenchCli, CpuRunWritesJsonWithCorrectCpuFormatsAndCsvRows) {
  const auto dir = temp_dir();
  const auto json_path = dir / "bench.json", csv_path = dir / "bench.csv";
  const auto run = run_command(
      "--device cpu --gen random:rows=3000,cols=2000,per_row=9 --gen road:rows=5000 "
      "--precision both --reps 20 --warmup 2 --copy-mb 8 --json " + json_path.string() +
      " --csv " + csv_path.string());
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("best per matrix"));

  std::ifstream json_file(json_path);
  const auto report = nlohmann::json::parse(json_file);  // throws (fails the test) if malformed
  EXPECT_EQ(report.at("device").at("is_gpu"), false);
  EXPECT_GT(report.at("copy_bandwidth").at("gb_per_s").get<double>(), 0.0);
  ASSERT_EQ(report.at("matrices").size(), 2u);
  std::size_t rows_expected = 0;
  for (const auto& matrix : report.at("matrices")) {
    SCOPED_TRACE(matrix.at("label").get<std::string>());
    const auto& features = matrix.at("features");
    const auto rows = features.at("rows").get<std::int64_t>();
    const auto cols = features.at("cols").get<std::int64_t>();
    const auto nnz = features.at("nnz").get<std::int64_t>();
    std::set<std::string> seen;
    for (const auto& r : matrix.at("results")) {
      ++rows_expected;
      if (!r.at("format").get<std::string>().starts_with("cpu_")) continue;
      const auto precision = r.at("precision").get<std::string>();
      seen.insert(r.at("format").get<std::string>() + " " + precision);
      EXPECT_EQ(r.at("correct"), true) << r.dump();
      EXPECT_EQ(r.at("status"), "ok");
      EXPECT_LE(r.at("max_error_ratio").get<double>(), 1.0);
      const double time_ms = r.at("time_ms").get<double>();
      EXPECT_GT(time_ms, 0.0);
      EXPECT_LE(r.at("min_ms").get<double>(), time_ms);
      EXPECT_GE(r.at("p90_ms").get<double>(), time_ms);
      const auto bytes = csr_byte_count(rows, cols, nnz, *parse_precision(precision), false);
      EXPECT_EQ(r.at("csr_model_bytes").get<std::uint64_t>(), bytes);
      EXPECT_NEAR(r.at("gflops").get<double>(), 2.0 * static_cast<double>(nnz) / (time_ms * 1e6), 1e-9);
      EXPECT_NEAR(r.at("effective_gb_per_s").get<double>(), static_cast<double>(bytes) / (time_ms * 1e6), 1e-9);
      EXPECT_TRUE(r.at("speedup_vs_cusparse_alg1").is_null());  // no cuSPARSE on the CPU
    }
    EXPECT_TRUE(seen.contains("cpu_csr fp32")) << "cpu_csr fp32 missing";
    EXPECT_TRUE(seen.contains("cpu_csr fp64")) << "cpu_csr fp64 missing";
  }

  std::ifstream csv_file(csv_path);
  std::string line;
  std::size_t csv_rows = 0;
  ASSERT_TRUE(std::getline(csv_file, line));
  EXPECT_TRUE(line.starts_with("matrix,source,derived,rows,cols,nnz,"));
  while (std::getline(csv_file, line)) ++csv_rows;
  EXPECT_EQ(csv_rows, rows_expected);
  std::filesystem::remove_all(dir);
}

TEST(SpmvBenchCli, HotVectorsTimeOneXYPairAndSayHow) {
  const auto dir = temp_dir();
  for (const std::string vectors : {"rotated", "hot"}) {
    SCOPED_TRACE(vectors);
    const auto json_path = dir / (vectors + ".json");
    const auto run = run_command("--device cpu --gen random:rows=300,cols=300,per_row=4 "
                                 "--formats cpu_csr --reps 20 --warmup 1 --copy-mb 8 --vectors " +
                                 vectors + " --json " + json_path.string());
    ASSERT_EQ(run.exit_code, 0) << run.output;
    std::ifstream json_file(json_path);
    const auto report = nlohmann::json::parse(json_file);
    EXPECT_EQ(report.at("settings").at("vectors"), vectors);
    for (const auto& r : report.at("matrices").at(0).at("results")) {
      // 300 x 300 is far below any L2 this host reports: rotated uses several pairs (or one
      // where the host reports no L2 size), hot always one.
      if (vectors == "hot") {
        EXPECT_EQ(r.at("buffer_pairs"), 1) << r.dump();
      }
      EXPECT_EQ(r.at("correct"), true);
    }
  }
  const auto bad = run_command("--device cpu --gen random:rows=30,cols=30,per_row=2 --vectors warm");
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_THAT(bad.output, HasSubstr("--vectors"));
  std::filesystem::remove_all(dir);
}

TEST(SpmvBenchCli, RejectsUnknownFormatBadSpecMissingFileAndTooFewRepsNamingThem) {
  const auto bad_format = run_command("--device cpu --copy-mb 8 --gen road:rows=100 --formats cpu_csr,nosuch");
  EXPECT_EQ(bad_format.exit_code, 1);
  EXPECT_THAT(bad_format.output, HasSubstr("unknown format 'nosuch'"));
  const auto bad_spec = run_command("--device cpu --copy-mb 8 --gen road:rows=100,lanes=2");
  EXPECT_EQ(bad_spec.exit_code, 1);
  EXPECT_THAT(bad_spec.output, HasSubstr("road: unknown key 'lanes'"));
  const auto missing = run_command("--device cpu --copy-mb 8 --data-dir /nonexistent-dir cage11.mtx.gz");
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_THAT(missing.output, HasSubstr("input 'cage11': no file /nonexistent-dir/cage11.mtx.gz"));
  const auto few_reps = run_command("--device cpu --gen road:rows=100 --reps 5");
  EXPECT_NE(few_reps.exit_code, 0);
  EXPECT_THAT(few_reps.output, HasSubstr("--reps"));
}

}  // namespace
}  // namespace spmvd
