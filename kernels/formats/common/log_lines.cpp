#include "kernels/formats/common/log_lines.hpp"

#include <spdlog/spdlog.h>

namespace spmvd {

void log_warning_line(std::string_view message) noexcept {
  try {
    spdlog::warn("{}", message);
  } catch (...) {
    // Logging must not throw (callers include destructors); the line is lost.
  }
}

void log_debug_line(std::string_view message) noexcept {
  try {
    spdlog::debug("{}", message);
  } catch (...) {
    // As above.
  }
}

}  // namespace spmvd
