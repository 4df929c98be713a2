#pragma once
// Bearer-token access to a gRPC service (docs/OPERATIONS.md "Security").
//
// Each guarded method checks the call's `authorization: Bearer <token>` metadata before it
// decodes anything: no metadata (or another scheme) is UNAUTHENTICATED, a wrong token is
// PERMISSION_DENIED. The daemon keeps only the token's SHA-256 digest and compares digests with
// CRYPTO_memcmp, so neither the time taken nor the comparison depends on where a guess differs
// or on its length.
//
// Why a check at the top of each method rather than an interceptor: gRPC 1.51's server
// interceptors cannot end a call with a status of their own (hijacking is client-side only),
// and an AuthMetadataProcessor runs only on secure (TLS) ports, while plaintext loopback is the
// default. Health and reflection are other services and stay open.

#include <grpcpp/server_context.h>
#include <grpcpp/support/status.h>

#include <array>
#include <optional>
#include <string>
#include <string_view>

#include "server/daemon_config.hpp"
#include "server/status_mapping.hpp"

namespace spmvd {

// A token as the daemon holds it: its SHA-256 digest only.
class BearerToken {
 public:
  // Throws Error(invalid_argument) for an empty token.
  explicit BearerToken(std::string_view token);
  // Constant time in the content of both tokens (digests of equal length, CRYPTO_memcmp).
  bool matches(std::string_view presented) const noexcept;

 private:
  std::array<unsigned char, 32> digest_{};
};

// The token one service requires, or none (open).
class ServiceGuard {
 public:
  ServiceGuard(std::string service_name, std::optional<BearerToken> token)
      : service_name_(std::move(service_name)), token_(std::move(token)) {}

  // The verdict on one call's `authorization` metadata value (nullopt: the call sent none).
  grpc::Status admit(std::optional<std::string_view> authorization) const;
  // The same, reading the metadata from the call.
  grpc::Status admit(const grpc::ServerContext& context) const;
  bool open() const noexcept { return !token_.has_value(); }

 private:
  std::string service_name_;
  std::optional<BearerToken> token_;
};

// Runs `body` (through run_and_map_errors) only when `guard` admits the call.
template <typename Body>
grpc::Status run_if_admitted(const ServiceGuard& guard, const grpc::ServerContext& context,
                             Body&& body) {
  if (grpc::Status verdict = guard.admit(context); !verdict.ok()) return verdict;
  return run_and_map_errors(std::forward<Body>(body));
}

struct ServiceTokens {
  std::optional<BearerToken> admin;
  std::optional<BearerToken> spmv;
};

// Reads each token from its file (trailing whitespace and newline stripped) or from its
// environment variable (SPMVD_ADMIN_TOKEN, SPMVD_SPMV_TOKEN). Refuses, with
// Error(failed_precondition): an unreadable or empty file, a file and the variable both set,
// and an Admin service without a token on an address other hosts can reach (the Admin service
// can hold the GPU for minutes and lists every plan, so it is open only on loopback).
ServiceTokens load_service_tokens(const SecurityConfig& security, const std::string& listen_address);

}  // namespace spmvd
