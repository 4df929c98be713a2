#pragma once
// The connection flags spmv and spmvctl share: TLS files and where the token comes from.
// Header-only so that the client library does not depend on CLI11.

#include <CLI/CLI.hpp>

#include <string>

#include "client/connection.hpp"

namespace spmvd {

struct ConnectionFlags {
  std::string token_file;
  ConnectionOptions options;  // token filled by resolve()
};

// token_variable: SPMVCTL_TOKEN for spmvctl, SPMV_TOKEN for spmv.
inline void add_connection_flags(CLI::App& app, ConnectionFlags& flags, const char* token_variable) {
  app.add_option("--token-file", flags.token_file,
                 std::string("file holding the bearer token (default: $") + token_variable + ")");
  app.add_option("--tls-ca-file", flags.options.tls_ca_file,
                 "PEM CA that signed the daemon's certificate: connect with TLS");
  app.add_option("--tls-cert-file", flags.options.tls_cert_file,
                 "PEM client certificate (daemons that require one)");
  app.add_option("--tls-key-file", flags.options.tls_key_file, "its PEM private key");
  app.add_option("--tls-server-name", flags.options.tls_server_name,
                 "name to check the daemon's certificate against (default: the host in --server)");
}

// Reads the token (file, else environment). Throws Error(failed_precondition).
inline ConnectionOptions resolve(const ConnectionFlags& flags, const char* token_variable) {
  ConnectionOptions options = flags.options;
  options.token = read_client_token(flags.token_file, token_variable);
  return options;
}

}  // namespace spmvd
