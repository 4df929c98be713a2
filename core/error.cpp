#include "core/error.hpp"

namespace spmvd {

std::string_view to_string(ErrorCode code) noexcept {
  switch (code) {
    case ErrorCode::invalid_argument: return "invalid_argument";
    case ErrorCode::not_found: return "not_found";
    case ErrorCode::resource_exhausted: return "resource_exhausted";
    case ErrorCode::failed_precondition: return "failed_precondition";
    case ErrorCode::unavailable: return "unavailable";
    case ErrorCode::internal: return "internal";
  }
  return "unknown";
}

}  // namespace spmvd
