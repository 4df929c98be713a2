// Bearer tokens: the verdicts a caller sees, and where the daemon takes its tokens from.

#include "server/token_auth.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include "core/error.hpp"

namespace spmvd {
namespace {

TEST(BearerToken, MatchesOnlyTheSameToken) {
  const BearerToken token("s3cret-token");
  EXPECT_TRUE(token.matches("s3cret-token"));
  EXPECT_FALSE(token.matches("s3cret-tokeN"));
  EXPECT_FALSE(token.matches("s3cret-token "));
  EXPECT_FALSE(token.matches(""));
}

TEST(BearerToken, RefusesAnEmptyToken) { EXPECT_THROW(BearerToken(""), Error); }

TEST(ServiceGuard, OpenGuardAdmitsEveryCall) {
  const ServiceGuard guard("Spmv", std::nullopt);
  EXPECT_TRUE(guard.admit(std::nullopt).ok());
  EXPECT_TRUE(guard.admit("Bearer anything").ok());
}

TEST(ServiceGuard, MissingMetadataIsUnauthenticated) {
  const ServiceGuard guard("Admin", BearerToken("t"));
  const grpc::Status verdict = guard.admit(std::nullopt);
  EXPECT_EQ(verdict.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(verdict.error_message(),
            "the Admin service needs `authorization: Bearer <token>` metadata");
}

TEST(ServiceGuard, AnotherSchemeIsUnauthenticated) {
  const ServiceGuard guard("Admin", BearerToken("t"));
  EXPECT_EQ(guard.admit("Basic dDp0").error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(guard.admit("Bearer").error_code(), grpc::StatusCode::UNAUTHENTICATED);
}

TEST(ServiceGuard, WrongTokenIsPermissionDenied) {
  const ServiceGuard guard("Admin", BearerToken("right"));
  const grpc::Status verdict = guard.admit("Bearer wrong");
  EXPECT_EQ(verdict.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(verdict.error_message(), "the bearer token is not the Admin service's token");
}

TEST(ServiceGuard, RightTokenIsAdmittedWhateverTheSchemeCase) {
  const ServiceGuard guard("Admin", BearerToken("right"));
  EXPECT_TRUE(guard.admit("Bearer right").ok());
  EXPECT_TRUE(guard.admit("bearer right").ok());
}

class ServiceTokensTest : public ::testing::Test {
 protected:
  void SetUp() override {
    unsetenv("SPMVD_ADMIN_TOKEN");
    unsetenv("SPMVD_SPMV_TOKEN");
    dir_ = std::filesystem::temp_directory_path() / ("spmvd-tokens-" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    unsetenv("SPMVD_ADMIN_TOKEN");
    std::filesystem::remove_all(dir_);
  }
  std::string write(const std::string& name, const std::string& content) {
    const auto path = (dir_ / name).string();
    std::ofstream(path) << content;
    std::filesystem::permissions(path, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
    return path;
  }
  std::filesystem::path dir_;
};

TEST_F(ServiceTokensTest, FileTokenLosesItsTrailingNewline) {
  SecurityConfig security;
  security.admin_token_file = write("admin", "abc123\n");
  const ServiceTokens tokens = load_service_tokens(security, "0.0.0.0:50051");
  ASSERT_TRUE(tokens.admin.has_value());
  EXPECT_TRUE(tokens.admin->matches("abc123"));
  EXPECT_FALSE(tokens.spmv.has_value());
}

TEST_F(ServiceTokensTest, EnvironmentTokenIsUsedWithoutAFile) {
  setenv("SPMVD_ADMIN_TOKEN", "from-env", 1);
  const ServiceTokens tokens = load_service_tokens({}, "127.0.0.1:50051");
  ASSERT_TRUE(tokens.admin.has_value());
  EXPECT_TRUE(tokens.admin->matches("from-env"));
}

TEST_F(ServiceTokensTest, FileAndEnvironmentTogetherAreRefused) {
  setenv("SPMVD_ADMIN_TOKEN", "from-env", 1);
  SecurityConfig security;
  security.admin_token_file = write("admin", "abc");
  try {
    load_service_tokens(security, "127.0.0.1:1");
    FAIL() << "accepted two sources";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::failed_precondition);
    EXPECT_STREQ(e.what(), "both admin-token-file and SPMVD_ADMIN_TOKEN are set; set one of them");
  }
}

TEST_F(ServiceTokensTest, EmptyOrMissingTokenFileIsRefused) {
  SecurityConfig security;
  security.admin_token_file = write("empty", " \n");
  EXPECT_THROW(load_service_tokens(security, "127.0.0.1:1"), Error);
  security.admin_token_file = (dir_ / "absent").string();
  EXPECT_THROW(load_service_tokens(security, "127.0.0.1:1"), Error);
}

TEST_F(ServiceTokensTest, NoAdminTokenIsRefusedOffLoopbackOnly) {
  EXPECT_NO_THROW(load_service_tokens({}, "127.0.0.1:50051"));
  EXPECT_NO_THROW(load_service_tokens({}, "[::1]:50051"));
  try {
    load_service_tokens({}, "0.0.0.0:50051");
    FAIL() << "an open Admin service on every interface";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::failed_precondition);
    EXPECT_NE(std::string(e.what()).find("the Admin service has no token and --listen 0.0.0.0:50051"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace spmvd
