#include "kernels/cuda/host_log.hpp"

#include <spdlog/spdlog.h>

namespace spmvd::cuda_detail {

void log_error(std::string_view message) noexcept {
  try {
    spdlog::error("{}", message);
  } catch (...) {
    // A log line that cannot be written is dropped rather than thrown out of a destructor.
  }
}

void log_warning(std::string_view message) noexcept {
  try {
    spdlog::warn("{}", message);
  } catch (...) {
    // As above.
  }
}

void log_debug(std::string_view message) noexcept {
  try {
    spdlog::debug("{}", message);
  } catch (...) {
    // As above.
  }
}

}  // namespace spmvd::cuda_detail
