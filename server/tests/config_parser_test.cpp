// The daemon's flags and config file keys (deploy/spmvd.toml): the issue-18 keys parse into
// their fields, and every key the example config shows, commented or not, is one spmvd knows.

#include "server/config_parser.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

namespace spmvd {
namespace {

std::variant<DaemonConfig, ConfigExit> parse(std::vector<std::string> args) {
  args.insert(args.begin(), "spmvd");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  return parse_daemon_config(static_cast<int>(argv.size()), argv.data());
}

TEST(DaemonConfigParser, SecurityMetricsAndMemoryKeysComeFromTheConfigFile) {
  const auto path = std::filesystem::temp_directory_path() / ("spmvd-config-" + std::to_string(getpid()) + ".toml");
  std::ofstream(path) << "admin-token-file = \"/etc/spmvd/admin.token\"\n"
                         "spmv-token-file = \"/etc/spmvd/spmv.token\"\n"
                         "tls-cert-file = \"/etc/spmvd/server.crt\"\n"
                         "tls-key-file = \"/etc/spmvd/server.key\"\n"
                         "tls-client-ca-file = \"/etc/spmvd/ca.crt\"\n"
                         "metrics-listen = \"0.0.0.0:9999\"\n"
                         "trim-memory-interval-ms = 250\n";
  const auto parsed = parse({"--config", path.string()});
  std::filesystem::remove(path);
  ASSERT_TRUE(std::holds_alternative<DaemonConfig>(parsed)) << std::get<ConfigExit>(parsed).message;
  const auto& config = std::get<DaemonConfig>(parsed);
  EXPECT_EQ(config.security.admin_token_file, "/etc/spmvd/admin.token");
  EXPECT_EQ(config.security.spmv_token_file, "/etc/spmvd/spmv.token");
  EXPECT_EQ(config.security.tls_cert_file, "/etc/spmvd/server.crt");
  EXPECT_EQ(config.security.tls_key_file, "/etc/spmvd/server.key");
  EXPECT_EQ(config.security.tls_client_ca_file, "/etc/spmvd/ca.crt");
  EXPECT_EQ(config.metrics_listen, "0.0.0.0:9999");
  EXPECT_EQ(config.trim_memory_interval_ms, 250u);
}

TEST(DaemonConfigParser, DefaultsListenOnLoopbackWithMetricsAndTrimming) {
  const auto parsed = parse({});
  ASSERT_TRUE(std::holds_alternative<DaemonConfig>(parsed));
  const auto& config = std::get<DaemonConfig>(parsed);
  EXPECT_EQ(config.listen_address, "127.0.0.1:50051");
  EXPECT_EQ(config.metrics_listen, "127.0.0.1:9464");
  EXPECT_EQ(config.trim_memory_interval_ms, 1000u);
  EXPECT_TRUE(config.security.admin_token_file.empty());
}

TEST(DaemonConfigParser, TuningBudgetFlagsParseAndDefaultToAutoTenPercentOfAThousand) {
  const auto defaults = std::get<DaemonConfig>(parse({}));
  EXPECT_FALSE(defaults.tuner.mode.has_value());
  EXPECT_DOUBLE_EQ(defaults.tuner.budget_fraction, 0.10);
  EXPECT_EQ(defaults.tuner.default_expected_multiplies, 1000u);
  const auto parsed = parse({"--tune-mode", "verify-top-k", "--tune-budget-fraction", "0.05",
                             "--expected-multiplies", "500"});
  ASSERT_TRUE(std::holds_alternative<DaemonConfig>(parsed)) << std::get<ConfigExit>(parsed).message;
  const auto& config = std::get<DaemonConfig>(parsed);
  EXPECT_EQ(config.tuner.mode, TuneMode::verify_top_k);
  EXPECT_DOUBLE_EQ(config.tuner.budget_fraction, 0.05);
  EXPECT_EQ(config.tuner.default_expected_multiplies, 500u);
  EXPECT_TRUE(std::holds_alternative<ConfigExit>(parse({"--tune-mode", "guess"})));
  EXPECT_TRUE(std::holds_alternative<ConfigExit>(parse({"--tune-budget-fraction", "2"})));
}

TEST(DaemonConfigParser, SamplesAndRefitScheduleParseAndDefaultToTwoThousandAndOff) {
  const auto defaults = std::get<DaemonConfig>(parse({}));
  EXPECT_EQ(defaults.samples_per_format, 2000u);
  EXPECT_EQ(defaults.refit_interval_s, 0u);
  const auto parsed = parse({"--samples-per-format", "300", "--refit-interval-s", "3600"});
  ASSERT_TRUE(std::holds_alternative<DaemonConfig>(parsed)) << std::get<ConfigExit>(parsed).message;
  EXPECT_EQ(std::get<DaemonConfig>(parsed).samples_per_format, 300u);
  EXPECT_EQ(std::get<DaemonConfig>(parsed).refit_interval_s, 3600u);
  EXPECT_TRUE(std::holds_alternative<ConfigExit>(parse({"--samples-per-format", "0"})));
}

// The kernel warm-up before serving (server/kernel_warm_up.hpp) is on unless switched off.
TEST(DaemonConfigParser, KernelWarmUpDefaultsOnAndSwitchesOff) {
  EXPECT_TRUE(std::get<DaemonConfig>(parse({})).warm_up_kernels);
  const auto parsed = parse({"--warm-up-kernels", "false"});
  ASSERT_TRUE(std::holds_alternative<DaemonConfig>(parsed)) << std::get<ConfigExit>(parsed).message;
  EXPECT_FALSE(std::get<DaemonConfig>(parsed).warm_up_kernels);
  EXPECT_TRUE(std::holds_alternative<ConfigExit>(parse({"--warm-up-kernels", "maybe"})));
}

TEST(DaemonConfigParser, EveryKeyOfTheExampleConfigIsAFlag) {
  std::ifstream example(SPMVD_EXAMPLE_CONFIG);
  ASSERT_TRUE(example) << SPMVD_EXAMPLE_CONFIG;
  const std::string help = std::get<ConfigExit>(parse({"--help"})).message;
  const std::regex key_line(R"(^#?\s*([a-z][a-z0-9-]*)\s*=)");
  int keys = 0;
  for (std::string line; std::getline(example, line);) {
    std::smatch match;
    if (!std::regex_search(line, match, key_line)) continue;
    ++keys;
    EXPECT_NE(help.find("--" + match[1].str()), std::string::npos)
        << "deploy/spmvd.toml shows '" << match[1] << "', which spmvd --help does not list";
  }
  EXPECT_GE(keys, 16) << "9 original keys, 5 security, metrics-listen, trim-memory-interval-ms";
}

}  // namespace
}  // namespace spmvd
