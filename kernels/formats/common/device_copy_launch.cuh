#pragma once
// The launch shape of the build kernels that copy the device CSR into a format's arrays
// (device_sell.cu, cuda_hyb's device_hyb_layout.cu): a thread per row, grid-stride. Copies are
// bandwidth-bound and run once per build, so no tuning: 256 threads, as many blocks as cover
// the rows up to a cap the grid-stride loop absorbs.

#include <algorithm>
#include <cstdint>

namespace spmvd::catalogue_detail {

inline constexpr unsigned kCopyBlockSize = 256;

inline unsigned copy_grid_size(std::int64_t rows) {
  constexpr std::int64_t kMaxBlocks = std::int64_t{1} << 20;
  return static_cast<unsigned>(
      std::clamp<std::int64_t>((rows + kCopyBlockSize - 1) / kCopyBlockSize, 1, kMaxBlocks));
}

}  // namespace spmvd::catalogue_detail
