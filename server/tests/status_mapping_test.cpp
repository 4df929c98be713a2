#include "server/status_mapping.hpp"

#include <gtest/gtest.h>

namespace spmvd {
namespace {

TEST(StatusMapping, EveryErrorCodeHasItsGrpcCode) {
  EXPECT_EQ(to_grpc_code(ErrorCode::invalid_argument), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(to_grpc_code(ErrorCode::not_found), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(to_grpc_code(ErrorCode::resource_exhausted), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_EQ(to_grpc_code(ErrorCode::failed_precondition), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(to_grpc_code(ErrorCode::unavailable), grpc::StatusCode::UNAVAILABLE);
  EXPECT_EQ(to_grpc_code(ErrorCode::internal), grpc::StatusCode::INTERNAL);
}

TEST(StatusMapping, ErrorsThrownInABodyBecomeStatusesWithTheirMessage) {
  const auto status = run_and_map_errors([] { throw Error(ErrorCode::not_found, "no handle 'ab'"); });
  EXPECT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(status.error_message(), "no handle 'ab'");
  const auto other = run_and_map_errors([] { throw std::runtime_error("boom"); });
  EXPECT_EQ(other.error_code(), grpc::StatusCode::INTERNAL);
  EXPECT_TRUE(run_and_map_errors([] {}).ok());
}

}  // namespace
}  // namespace spmvd
