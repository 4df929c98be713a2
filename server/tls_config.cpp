#include "server/tls_config.hpp"

#include <grpcpp/security/server_credentials.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "core/error.hpp"

namespace spmvd {
namespace {

std::string read_pem(const std::string& path, const char* key) {
  std::ifstream in(path);
  if (!in)
    throw Error(ErrorCode::failed_precondition,
                std::string(key) + " " + path + " cannot be read: " + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  if (text.str().find("-----BEGIN") == std::string::npos)
    throw Error(ErrorCode::failed_precondition,
                std::string(key) + " " + path + " holds no PEM block (-----BEGIN ...)");
  return text.str();
}

}  // namespace

bool tls_enabled(const SecurityConfig& security) noexcept {
  return !security.tls_cert_file.empty() || !security.tls_key_file.empty() ||
         !security.tls_client_ca_file.empty();
}

std::shared_ptr<grpc::ServerCredentials> server_credentials(const SecurityConfig& security) {
  if (!tls_enabled(security)) return grpc::InsecureServerCredentials();
  if (security.tls_cert_file.empty() || security.tls_key_file.empty())
    throw Error(ErrorCode::failed_precondition,
                "TLS needs both tls-cert-file and tls-key-file (tls-client-ca-file is optional)");
  grpc::SslServerCredentialsOptions options;
  options.pem_key_cert_pairs.push_back({read_pem(security.tls_key_file, "tls-key-file"),
                                        read_pem(security.tls_cert_file, "tls-cert-file")});
  if (!security.tls_client_ca_file.empty()) {
    options.pem_root_certs = read_pem(security.tls_client_ca_file, "tls-client-ca-file");
    options.client_certificate_request =
        GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY;
  }
  return grpc::SslServerCredentials(options);
}

std::string transport_description(const SecurityConfig& security) {
  if (!tls_enabled(security)) return "plaintext";
  return security.tls_client_ca_file.empty() ? "TLS" : "TLS (client certificates required)";
}

}  // namespace spmvd
