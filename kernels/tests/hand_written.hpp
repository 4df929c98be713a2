#pragma once
// Devices and matrix features written by hand, so rules are tested without hardware
// (STYLE.md: "DeviceInfo is a value a test can write by hand").

#include <algorithm>
#include <cstdint>

#include "core/device_info.hpp"
#include "core/matrix_features.hpp"

namespace spmvd::testing {

// An H100 SXM as cudaGetDeviceProperties reports it (CUDA 12/13).
inline DeviceInfo h100() {
  return DeviceInfo{.is_gpu = true,
                    .name = "NVIDIA H100 80GB HBM3",
                    .compute_capability_major = 9,
                    .compute_capability_minor = 0,
                    .sm_count = 132,
                    .memory_bytes = std::uint64_t{80} << 30,
                    .l2_bytes = std::uint64_t{50} << 20,
                    .warp_size = 32,
                    .max_threads_per_sm = 2048,
                    .max_blocks_per_sm = 32,
                    .registers_per_sm = 65536,
                    .shared_memory_per_sm_bytes = 228 << 10,
                    .driver_version = 13000,
                    .runtime_version = 13000,
                    .cusparse_version = 12603};
}

inline DeviceInfo eight_core_cpu() {
  return DeviceInfo{.is_gpu = false,
                    .name = "Test CPU",
                    .sm_count = 8,
                    .memory_bytes = std::uint64_t{64} << 30,
                    .warp_size = 1};
}

// Features with only the fields the rules read set (rows, cols, nnz, row length statistics).
inline MatrixFeatures features(std::int64_t rows, std::int64_t cols, std::int64_t nnz) {
  MatrixFeatures f;
  f.rows = rows;
  f.cols = cols;
  f.nnz = nnz;
  f.row_length_mean = rows > 0 ? static_cast<double>(nnz) / static_cast<double>(rows) : 0.0;
  f.row_length_min = 0;
  f.row_length_max = std::min(nnz, cols);
  return f;
}

}  // namespace spmvd::testing
