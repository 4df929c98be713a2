#pragma once
// The transport of the gRPC port: plaintext, or TLS from PEM files (docs/OPERATIONS.md
// "Security"). With a client CA, every client must present a certificate that CA signed.

#include <grpcpp/security/server_credentials.h>

#include <memory>
#include <string>

#include "server/daemon_config.hpp"

namespace spmvd {

bool tls_enabled(const SecurityConfig& security) noexcept;

// Reads the PEM files once. Throws Error(failed_precondition) naming the file that is missing
// or unreadable, or a certificate without its key (and the reverse), or a client CA without a
// certificate of the server's own.
std::shared_ptr<grpc::ServerCredentials> server_credentials(const SecurityConfig& security);

// "TLS (client certificates required)", "TLS", "plaintext": for the start-up log line.
std::string transport_description(const SecurityConfig& security);

}  // namespace spmvd
