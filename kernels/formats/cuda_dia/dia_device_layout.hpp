#pragma once
// cuda_dia's arrays built on the device from the shared device CSR (kernels/build_source.hpp,
// issue 17 "build once, on the GPU"): the same offsets and diagonal-major values as the host
// reference make_dia_layout (dia_layout.hpp), without a pass over the matrix on the host.
// Pure C++ header (the builder is in dia_device_layout.cu, compiled only with CUDA), so a
// g++-compiled test can call it.

#include <cstddef>
#include <cstdint>
#include <memory>

#include "core/precision.hpp"
#include "kernels/build_source.hpp"
#include "kernels/device.hpp"

namespace spmvd {

struct DeviceDiaLayout {
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::int32_t diagonals = 0;
  Precision precision = Precision::fp64;
  DeviceBuffer offsets;  // diagonals int32 offsets (column - row), ascending
  DeviceBuffer
      values;  // diagonals * rows values in `precision`, diagonal d of row r at d * rows + r

  std::size_t bytes() const noexcept { return offsets.bytes() + values.bytes(); }
};

// Builds the DIA arrays of `csr` on `device` (its native stream), values in csr.precision:
// marks the occupied diagonals (a kernel, one thread per row), compacts them to ascending
// offsets (cub::DeviceSelect::Flagged), zeroes the values and scatters every entry to its
// diagonal (a kernel, one thread per row, binary search among the offsets). Waits once, for
// the diagonal count that sizes the values; the values are complete in stream order when it
// returns. Builds whatever it is given; entries of one (row, column) are summed. Temporaries:
// rows + cols - 1 bytes of flags and as many int32 offsets, freed before it returns.
// Throws Error(invalid_argument) when rows + cols - 1 exceeds 2^31 - 1 (offsets are int32),
// Error(resource_exhausted) when device memory runs out, Error(internal) on a CUDA failure.
std::shared_ptr<const DeviceDiaLayout> build_dia_layout_on_device(Device& device,
                                                                  const DeviceCsrArrays& csr);

}  // namespace spmvd
