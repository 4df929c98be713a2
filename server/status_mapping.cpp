#include "server/status_mapping.hpp"

namespace spmvd {

grpc::StatusCode to_grpc_code(ErrorCode code) noexcept {
  switch (code) {
    case ErrorCode::invalid_argument: return grpc::StatusCode::INVALID_ARGUMENT;
    case ErrorCode::not_found: return grpc::StatusCode::NOT_FOUND;
    case ErrorCode::resource_exhausted: return grpc::StatusCode::RESOURCE_EXHAUSTED;
    case ErrorCode::failed_precondition: return grpc::StatusCode::FAILED_PRECONDITION;
    case ErrorCode::unavailable: return grpc::StatusCode::UNAVAILABLE;
    case ErrorCode::internal: return grpc::StatusCode::INTERNAL;
  }
  return grpc::StatusCode::UNKNOWN;
}

grpc::Status to_grpc_status(const Error& error) {
  return {to_grpc_code(error.code()), error.what()};
}

}  // namespace spmvd
