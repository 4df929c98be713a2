#include "server/token_auth.hpp"

#include <openssl/crypto.h>
#include <openssl/sha.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "core/error.hpp"
#include "server/listen_address.hpp"

namespace spmvd {
namespace {

std::array<unsigned char, 32> sha256(std::string_view text) {
  std::array<unsigned char, 32> digest{};
  SHA256(reinterpret_cast<const unsigned char*>(text.data()), text.size(), digest.data());
  return digest;
}

std::string strip_trailing_space(std::string text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
  return text;
}

std::string read_token_file(const std::string& path, const char* key) {
  std::ifstream in(path);
  if (!in)
    throw Error(ErrorCode::failed_precondition,
                std::string(key) + " " + path + " cannot be read: " + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  std::string token = strip_trailing_space(text.str());
  if (token.empty()) throw Error(ErrorCode::failed_precondition, std::string(key) + " " + path + " is empty");
  struct stat info {};
  if (stat(path.c_str(), &info) == 0 && (info.st_mode & (S_IRWXG | S_IRWXO)) != 0)
    spdlog::warn("{} {} is readable by other users (mode {:o}); chmod 600 it", key, path,
                 info.st_mode & 0777);
  return token;
}

// The token from `file` or from the environment variable, or nullopt when neither is set.
std::optional<BearerToken> load_token(const std::string& file, const char* key,
                                      const char* variable) {
  const char* from_environment = std::getenv(variable);
  const bool in_environment = from_environment != nullptr && *from_environment != '\0';
  if (!file.empty() && in_environment)
    throw Error(ErrorCode::failed_precondition, std::string("both ") + key + " and " + variable +
                                                    " are set; set one of them");
  if (!file.empty()) return BearerToken(read_token_file(file, key));
  if (in_environment) return BearerToken(strip_trailing_space(from_environment));
  return std::nullopt;
}

bool starts_with_bearer(std::string_view header) {
  constexpr std::string_view kScheme = "bearer ";
  if (header.size() < kScheme.size()) return false;
  for (std::size_t i = 0; i < kScheme.size(); ++i)  // the scheme is case-insensitive (RFC 7235)
    if (std::tolower(static_cast<unsigned char>(header[i])) != kScheme[i]) return false;
  return true;
}

}  // namespace

BearerToken::BearerToken(std::string_view token) {
  if (token.empty()) throw_invalid("a bearer token must not be empty");
  digest_ = sha256(token);
}

bool BearerToken::matches(std::string_view presented) const noexcept {
  const auto digest = sha256(presented);
  return CRYPTO_memcmp(digest.data(), digest_.data(), digest_.size()) == 0;
}

grpc::Status ServiceGuard::admit(std::optional<std::string_view> authorization) const {
  if (!token_) return grpc::Status::OK;
  if (!authorization)
    return {grpc::StatusCode::UNAUTHENTICATED,
            "the " + service_name_ + " service needs `authorization: Bearer <token>` metadata"};
  if (!starts_with_bearer(*authorization))
    return {grpc::StatusCode::UNAUTHENTICATED,
            "the " + service_name_ + " service takes `authorization: Bearer <token>`; the call "
            "sent another scheme"};
  if (!token_->matches(authorization->substr(7)))
    return {grpc::StatusCode::PERMISSION_DENIED,
            "the bearer token is not the " + service_name_ + " service's token"};
  return grpc::Status::OK;
}

grpc::Status ServiceGuard::admit(const grpc::ServerContext& context) const {
  const auto& metadata = context.client_metadata();
  const auto found = metadata.find("authorization");
  if (found == metadata.end()) return admit(std::nullopt);
  return admit(std::string_view(found->second.data(), found->second.size()));
}

ServiceTokens load_service_tokens(const SecurityConfig& security,
                                  const std::string& listen_address) {
  ServiceTokens tokens{
      load_token(security.admin_token_file, "admin-token-file", "SPMVD_ADMIN_TOKEN"),
      load_token(security.spmv_token_file, "spmv-token-file", "SPMVD_SPMV_TOKEN")};
  if (!tokens.admin && !is_loopback_address(listen_address))
    throw Error(ErrorCode::failed_precondition,
                "the Admin service has no token and --listen " + listen_address +
                    " is reachable from other hosts: set admin-token-file (or "
                    "SPMVD_ADMIN_TOKEN), or listen on a loopback address");
  return tokens;
}

}  // namespace spmvd
