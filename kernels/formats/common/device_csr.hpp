#pragma once
// A CSR matrix as it is, on a device: 64-bit row offsets, 32-bit column indices, values in
// Value (fp64 -> fp32 rounds to nearest, once, at build). The arrays of the formats that run
// on plain CSR (cpu_csr, cuda_csr_scalar, cuda_csr_vector).

#include <cstddef>
#include <vector>

#include "core/csr_matrix.hpp"
#include "kernels/device.hpp"

namespace spmvd {

template <typename Value>
struct DeviceCsr {
  DeviceCsr(Device& device, const CsrMatrix<double>& m)
      : row_offsets(upload(device, m.row_offsets.data(), m.row_offsets.size())),
        col_indices(upload(device, m.col_indices.data(), m.col_indices.size())) {
    const std::vector<Value> converted(m.values.begin(), m.values.end());
    values = upload(device, converted.data(), converted.size());
  }

  std::size_t bytes() const noexcept {
    return row_offsets.bytes() + col_indices.bytes() + values.bytes();
  }

  DeviceBuffer row_offsets;  // RowOffset
  DeviceBuffer col_indices;  // ColIndex
  DeviceBuffer values;       // Value
};

}  // namespace spmvd
