#include "tests/integration/test_postgres_server.hpp"

#include <stdio.h>
#include <stdlib.h>

#include <array>
#include <cstdlib>
#include <fstream>
#include <stdexcept>

namespace spmvd::testing {
namespace {

const std::string kScript = std::string(SPMVD_SOURCE_DIR) + "/deploy/test-postgres.sh";

std::string bindir() {
  const char* dir = std::getenv("SPMVD_POSTGRES_BINDIR");
  return dir != nullptr ? dir : "/usr/lib/postgresql/15/bin";
}

// Runs the script and returns its standard output; throws with it when the script fails.
std::string run_script(const std::string& arguments) {
  const std::string command = "bash " + kScript + " " + arguments + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) throw std::runtime_error("cannot run " + command);
  std::string output;
  std::array<char, 512> buffer{};
  while (fgets(buffer.data(), static_cast<int>(buffer.size()), pipe) != nullptr) output += buffer.data();
  const int status = pclose(pipe);
  if (status != 0) throw std::runtime_error(command + " failed: " + output);
  while (!output.empty() && (output.back() == '\n' || output.back() == ' ')) output.pop_back();
  return output;
}

}  // namespace

bool TestPostgresServer::available() {
  return std::filesystem::exists(bindir() + "/initdb") && std::filesystem::exists(kScript);
}

TestPostgresServer::TestPostgresServer() {
  std::string pattern = (std::filesystem::temp_directory_path() / "spmvd-it-pg-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  dir_ = pattern;
  url_ = run_script("start " + dir_.string());
  std::ifstream(dir_ / "port") >> port_;
}

TestPostgresServer::~TestPostgresServer() {
  try {
    stop();
  } catch (const std::exception&) {
    // Already stopped, or the directory is gone: nothing left to stop.
  }
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

void TestPostgresServer::stop() { run_script("stop " + dir_.string()); }

void TestPostgresServer::start_again() { run_script("start " + dir_.string() + " " + port_); }

}  // namespace spmvd::testing
