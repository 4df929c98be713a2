#pragma once
// A PostgreSQL server of the test's own (deploy/test-postgres.sh): a temporary data directory,
// loopback only, stopped and started at will without disturbing the server other tests share.

#include <filesystem>
#include <string>

namespace spmvd::testing {

class TestPostgresServer {
 public:
  // Initialises and starts a server on a free port. Throws std::runtime_error with the
  // script's output when it cannot.
  TestPostgresServer();
  ~TestPostgresServer();  // stops it and deletes its directory
  TestPostgresServer(const TestPostgresServer&) = delete;
  TestPostgresServer& operator=(const TestPostgresServer&) = delete;

  // Whether this machine has the PostgreSQL server binaries the script needs.
  static bool available();

  const std::string& url() const { return url_; }
  void stop();
  void start_again();  // on the same port, so clients' URLs still hold

 private:
  std::filesystem::path dir_;
  std::string url_;
  std::string port_;
};

}  // namespace spmvd::testing
