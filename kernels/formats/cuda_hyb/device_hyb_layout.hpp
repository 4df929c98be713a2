#pragma once
// HYB (hyb_layout.hpp) built on the device from the build source's shared CSR
// (kernels/build_source.hpp, issue 17 "build once"): the arrays make_hyb_layout builds on the
// host, element for element. The host computes each row's overflow beyond K as a prefix sum
// (O(rows)) and uploads it; one kernel, a thread per row, copies the row's first K entries into
// the column-major ELL part and the rest into the row-sorted COO remainder.

#include <cstdint>
#include <memory>
#include <string>

#include "core/precision.hpp"
#include "kernels/build_source.hpp"
#include "kernels/device.hpp"

namespace spmvd {

struct DeviceHybLayout {
  std::int64_t rows = 0;
  std::int64_t ell_width = 0;  // K
  std::int64_t coo_nnz = 0;    // entries beyond K
  Precision precision = Precision::fp64;
  DeviceBuffer ell_col_indices;  // ColIndex, rows * K slots (j*rows + r), padding kPaddingColumn
  DeviceBuffer ell_values;       // float or double, rows * K slots, padding 0
  DeviceBuffer coo_row_indices;  // std::int32_t, coo_nnz, non-decreasing
  DeviceBuffer coo_col_indices;  // ColIndex, coo_nnz
  DeviceBuffer coo_values;       // float or double, coo_nnz

  std::size_t bytes() const noexcept {
    return ell_col_indices.bytes() + ell_values.bytes() + coo_row_indices.bytes() +
           coo_col_indices.bytes() + coo_values.bytes();
  }
};

// Builds HYB of width ell_width of source.host() on source.device() from
// source.device_csr(precision), equal to make_hyb_layout<Value>(source.host(), ell_width);
// returns once the copy kernel has finished (its row prefix sums are freed on return, the
// source's CSR may go with the source). Throws Error(invalid_argument)
// for ell_width < 0 or rows >= 2^31, Error(resource_exhausted) when device memory runs out.
std::shared_ptr<const DeviceHybLayout> make_device_hyb_layout(const BuildSource& source,
                                                              Precision precision,
                                                              std::int64_t ell_width);

// The source's cache key of that layout: "hyb/K=<K>/<precision>".
std::string device_hyb_layout_key(Precision precision, std::int64_t ell_width);

// make_device_hyb_layout, shared through source.shared_layout under device_hyb_layout_key: every
// launch configuration of one K gets the same arrays while an operator holds them.
std::shared_ptr<const DeviceHybLayout> shared_device_hyb_layout(const BuildSource& source,
                                                                Precision precision,
                                                                std::int64_t ell_width);

}  // namespace spmvd
