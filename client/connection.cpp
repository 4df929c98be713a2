#include "client/connection.hpp"

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "core/error.hpp"

namespace spmvd {
namespace {

std::string read_file(const std::string& path, const char* what) {
  std::ifstream in(path);
  if (!in)
    throw Error(ErrorCode::failed_precondition,
                std::string(what) + " " + path + " cannot be read: " + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string strip_trailing_space(std::string text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
  return text;
}

}  // namespace

std::shared_ptr<grpc::Channel> open_channel(const std::string& address,
                                            const ConnectionOptions& connection,
                                            grpc::ChannelArguments arguments) {
  const bool tls = !connection.tls_ca_file.empty() || !connection.tls_cert_file.empty();
  if (!tls) return grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), arguments);
  grpc::SslCredentialsOptions options;
  if (!connection.tls_ca_file.empty())
    options.pem_root_certs = read_file(connection.tls_ca_file, "--tls-ca-file");
  if (!connection.tls_cert_file.empty()) {
    options.pem_cert_chain = read_file(connection.tls_cert_file, "--tls-cert-file");
    options.pem_private_key = read_file(connection.tls_key_file, "--tls-key-file");
  }
  if (!connection.tls_server_name.empty())
    arguments.SetSslTargetNameOverride(connection.tls_server_name);
  return grpc::CreateCustomChannel(address, grpc::SslCredentials(options), arguments);
}

void authorize(grpc::ClientContext& context, const ConnectionOptions& connection) {
  if (!connection.token.empty()) context.AddMetadata("authorization", "Bearer " + connection.token);
}

std::string read_client_token(const std::string& token_file, const char* environment_variable) {
  if (!token_file.empty()) {
    std::string token = strip_trailing_space(read_file(token_file, "--token-file"));
    if (token.empty()) throw Error(ErrorCode::failed_precondition, "--token-file " + token_file + " is empty");
    return token;
  }
  const char* from_environment = std::getenv(environment_variable);
  return from_environment ? strip_trailing_space(from_environment) : std::string();
}

}  // namespace spmvd
