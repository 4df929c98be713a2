#pragma once
// Arrays derived on the device from the source's shared device CSR (kernels/build_source.hpp):
// the formats whose arrays are the CSR's own but for one array build that array with a kernel
// over device memory instead of converting on the host and uploading (issue 17 "build once").
// COO in CSR order is the CSR's columns and values plus row indices; cuSPARSE's CSR wants one
// index type for offsets and columns, so 32-bit offsets (nnz < 2^31) or 64-bit columns.
//
// The shared_* forms build once per source and hand the same array to every operator built
// from it while one still holds it (BuildSource::shared_layout): ALG1 and ALG2 of cuSPARSE,
// every launch of cuda_coo. None depends on the values' precision. All run on a CUDA device
// (defined in csr_derived_arrays.cu, compiled only with CUDA), on its stream: the arrays are
// ready for any work issued after them on that stream.

#include <memory>

#include "kernels/build_source.hpp"
#include "kernels/device.hpp"

namespace spmvd {

// nnz 32-bit row indices: entry k holds the row r with row_offsets[r] <= k < row_offsets[r+1]
// (non-decreasing, as make_coo_layout's). Throws Error(invalid_argument) when rows >= 2^31.
DeviceBuffer expand_row_indices(Device& device, const DeviceCsrArrays& csr);
// The rows + 1 row offsets as 32-bit integers. Throws Error(invalid_argument) when nnz >= 2^31
// (an offset would not fit).
DeviceBuffer narrow_row_offsets(Device& device, const DeviceCsrArrays& csr);
// The nnz column indices as 64-bit integers.
DeviceBuffer widen_col_indices(Device& device, const DeviceCsrArrays& csr);

// The three above, from `csr` (one of source.device_csr's), cached in `source` under
// "coo_row_indices", "csr_offsets32" and "csr_columns64".
std::shared_ptr<const DeviceBuffer> shared_row_indices(const BuildSource& source,
                                                       const DeviceCsrArrays& csr);
std::shared_ptr<const DeviceBuffer> shared_row_offsets32(const BuildSource& source,
                                                         const DeviceCsrArrays& csr);
std::shared_ptr<const DeviceBuffer> shared_col_indices64(const BuildSource& source,
                                                         const DeviceCsrArrays& csr);

}  // namespace spmvd
