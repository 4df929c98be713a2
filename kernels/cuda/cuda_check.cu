#include <string>

#include "kernels/cuda/cuda_check.cuh"
#include "kernels/cuda/host_log.hpp"

namespace spmvd::cuda_detail {
namespace {

std::string where(const char* call, const char* file, int line) {
  return std::string(call) + " at " + file + ":" + std::to_string(line);
}

}  // namespace

void throw_cuda_error(cudaError_t status, const char* call, const char* file, int line) {
  // Reset the (non-sticky) last-error slot so that a later SPMVD_CUDA_CHECK_LAUNCH does not
  // report this failure a second time.
  (void)cudaGetLastError();
  const std::string message = where(call, file, line) + " failed: " + cudaGetErrorName(status) +
                              " (" + cudaGetErrorString(status) + ")";
  // Out of memory is a budget problem the caller can act on (evict, pick a smaller format);
  // anything else is a bug or a broken device.
  throw Error(
      status == cudaErrorMemoryAllocation ? ErrorCode::resource_exhausted : ErrorCode::internal,
      message);
}

void throw_cusparse_error(cusparseStatus_t status, const char* call, const char* file, int line) {
  const std::string message = where(call, file, line) + " failed: " + cusparseGetErrorName(status) +
                              " (" + cusparseGetErrorString(status) + ")";
  throw Error(
      status == CUSPARSE_STATUS_ALLOC_FAILED ? ErrorCode::resource_exhausted : ErrorCode::internal,
      message);
}

void log_cuda_error(cudaError_t status, const char* call, const char* file, int line) noexcept {
  try {
    log_error(where(call, file, line) + " failed: " + cudaGetErrorName(status) + " (" +
              cudaGetErrorString(status) + ")");
  } catch (...) {
    // Building the message can throw (std::bad_alloc); a destructor must not.
  }
}

}  // namespace spmvd::cuda_detail
