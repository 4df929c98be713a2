#pragma once
// Every CUDA runtime and cuSPARSE call is checked (RAFT_CUDA_TRY style). The throwing forms
// raise spmvd::Error naming the call, file and line; the _NO_THROW forms only log, for
// destructors.

#include <cuda_runtime.h>
#include <cusparse.h>

#include <string>

#include "core/error.hpp"

namespace spmvd::cuda_detail {

[[noreturn]] void throw_cuda_error(cudaError_t status, const char* call, const char* file,
                                   int line);
[[noreturn]] void throw_cusparse_error(cusparseStatus_t status, const char* call,
                                       const char* file, int line);
void log_cuda_error(cudaError_t status, const char* call, const char* file, int line) noexcept;

}  // namespace spmvd::cuda_detail

#define SPMVD_CUDA_CHECK(call)                                                           \
  do {                                                                                   \
    const cudaError_t spmvd_status_ = (call);                                            \
    if (spmvd_status_ != cudaSuccess)                                                    \
      ::spmvd::cuda_detail::throw_cuda_error(spmvd_status_, #call, __FILE__, __LINE__); \
  } while (0)

#define SPMVD_CUDA_CHECK_NO_THROW(call)                                                \
  do {                                                                                 \
    const cudaError_t spmvd_status_ = (call);                                          \
    if (spmvd_status_ != cudaSuccess)                                                  \
      ::spmvd::cuda_detail::log_cuda_error(spmvd_status_, #call, __FILE__, __LINE__); \
  } while (0)

// After a kernel launch: catches bad launch configurations at once.
#define SPMVD_CUDA_CHECK_LAUNCH() SPMVD_CUDA_CHECK(cudaGetLastError())

#define SPMVD_CUSPARSE_CHECK(call)                                                           \
  do {                                                                                       \
    const cusparseStatus_t spmvd_status_ = (call);                                           \
    if (spmvd_status_ != CUSPARSE_STATUS_SUCCESS)                                            \
      ::spmvd::cuda_detail::throw_cusparse_error(spmvd_status_, #call, __FILE__, __LINE__); \
  } while (0)
