#pragma once
// Logging for .cu files. spdlog's headers do not compile under nvcc 13 with fmt 9 (the
// consteval format-string check in SPDLOG_LOGGER_CATCH is rejected), so CUDA sources log
// through these functions, compiled by g++. Never throw: safe in destructors.

#include <string_view>

namespace spmvd::cuda_detail {

void log_error(std::string_view message) noexcept;
void log_warning(std::string_view message) noexcept;
void log_debug(std::string_view message) noexcept;

}  // namespace spmvd::cuda_detail
