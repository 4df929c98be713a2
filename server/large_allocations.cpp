#include "server/large_allocations.hpp"

#include <malloc.h>

#include <string>

#include "core/error.hpp"

namespace spmvd {

void serve_large_allocations_by_mmap(std::uint64_t bytes) {
  if (bytes == 0) return;
  if (bytes > kMaxMmapThresholdBytes)
    throw Error(ErrorCode::invalid_argument,
                "malloc-mmap-threshold-bytes is " + std::to_string(bytes) +
                    ", above glibc's largest mmap threshold of " +
                    std::to_string(kMaxMmapThresholdBytes) + " bytes");
  if (mallopt(M_MMAP_THRESHOLD, static_cast<int>(bytes)) != 1)
    throw Error(ErrorCode::internal,
                "mallopt(M_MMAP_THRESHOLD, " + std::to_string(bytes) + ") failed");
}

}  // namespace spmvd
