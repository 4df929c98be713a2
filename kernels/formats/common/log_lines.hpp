#pragma once
// spdlog for .cu files: nvcc (CUDA 13.0) rejects fmt's consteval format strings, so CUDA code
// composes its message and logs it through these g++-compiled functions. Never throw.

#include <string_view>

namespace spmvd {

void log_warning_line(std::string_view message) noexcept;
void log_debug_line(std::string_view message) noexcept;

}  // namespace spmvd
