#pragma once
// The one place where spmvd's error vocabulary becomes gRPC status codes (STYLE.md "Errors").

#include <grpcpp/support/status.h>

#include <exception>

#include "core/error.hpp"

namespace spmvd {

grpc::StatusCode to_grpc_code(ErrorCode code) noexcept;
grpc::Status to_grpc_status(const Error& error);
// Runs `body`; an spmvd::Error becomes its status, anything else INTERNAL with its what().
template <typename Body>
grpc::Status run_and_map_errors(Body&& body) {
  try {
    body();
    return grpc::Status::OK;
  } catch (const Error& e) {
    return to_grpc_status(e);
  } catch (const std::bad_alloc&) {
    return {grpc::StatusCode::RESOURCE_EXHAUSTED, "host memory exhausted"};
  } catch (const std::exception& e) {
    return {grpc::StatusCode::INTERNAL, e.what()};
  }
}

}  // namespace spmvd
