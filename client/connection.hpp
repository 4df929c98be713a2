#pragma once
// How a client reaches a daemon: the channel's transport (plaintext or TLS) and the bearer
// token sent with every call (docs/OPERATIONS.md "Security").

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>

namespace spmvd {

struct ConnectionOptions {
  std::string token;          // sent as `authorization: Bearer <token>`; empty: none
  std::string tls_ca_file;    // PEM roots that signed the daemon's certificate; set: TLS
  std::string tls_cert_file;  // PEM client certificate, for daemons that require one
  std::string tls_key_file;   // its private key
  // The name the daemon's certificate is checked against when it differs from the host in
  // the address (e.g. connecting to 127.0.0.1 with a certificate for "spmvd.internal").
  std::string tls_server_name;
};

// Throws spmvd::Error(failed_precondition) naming an unreadable PEM file.
std::shared_ptr<grpc::Channel> open_channel(const std::string& address,
                                            const ConnectionOptions& connection,
                                            grpc::ChannelArguments arguments);
// Adds the bearer token (if any) to one call.
void authorize(grpc::ClientContext& context, const ConnectionOptions& connection);

// The token a CLI sends: the file's content (trailing whitespace stripped) when token_file is
// set, else the environment variable's value, else empty. Tokens never come from a flag's
// value, which `ps` shows. Throws Error(failed_precondition) for an unreadable or empty file.
std::string read_client_token(const std::string& token_file, const char* environment_variable);

}  // namespace spmvd
