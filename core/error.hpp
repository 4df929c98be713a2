#pragma once
// The one error vocabulary of spmvd (STYLE.md "Errors"). Every layer throws spmvd::Error;
// server/status_mapping.cpp is the one place that turns an ErrorCode into a gRPC status.

#include <stdexcept>
#include <string>
#include <string_view>

namespace spmvd {

enum class ErrorCode {
  invalid_argument,     // the caller sent something malformed (bad matrix, wrong vector length)
  not_found,            // unknown handle, missing file
  resource_exhausted,   // over a size or memory budget
  failed_precondition,  // the system is not in a state to do this (e.g. no GPU for a GPU plan)
  unavailable,          // a dependency (database, device) cannot be reached now
  internal,             // a bug or an unexpected CUDA/SQLite failure
};

std::string_view to_string(ErrorCode code) noexcept;

class Error : public std::runtime_error {
 public:
  Error(ErrorCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
  ErrorCode code() const noexcept { return code_; }

 private:
  ErrorCode code_;
};

[[noreturn]] inline void throw_invalid(const std::string& message) {
  throw Error(ErrorCode::invalid_argument, message);
}

}  // namespace spmvd
