#pragma once
#include "core/device_info.hpp"

namespace spmvd::testing_support {

// H100 SXM per-SM limits (CUDA Programming Guide, compute capability 9.0).
inline DeviceInfo h100_like() {
  return DeviceInfo{.is_gpu = true,
                    .name = "H100-like",
                    .compute_capability_major = 9,
                    .compute_capability_minor = 0,
                    .sm_count = 132,
                    .memory_bytes = 80ull << 30,
                    .l2_bytes = 50ull << 20,
                    .max_threads_per_sm = 2048,
                    .max_blocks_per_sm = 32,
                    .registers_per_sm = 65536,
                    .shared_memory_per_sm_bytes = 228 * 1024};
}

}  // namespace spmvd::testing_support
