#pragma once
// SELL-C-sigma (and ELL, its one-slice case) built on the device from the build source's
// shared CSR (kernels/build_source.hpp, issue 17 "build once"): the arrays make_sell_layout
// (sell_layout.hpp) builds on the host, slot for slot, without the host layout loop and the
// upload of every candidate. The host does the O(rows) part (the row order of sell_row_order
// and the slice offsets) and uploads it; one kernel copies the O(nnz) columns and values out of
// the device CSR, a thread per sorted row.
//
// One build serves every candidate whose arrays are the same (cuda_sell and cusparse_sell at
// one C, sigma 1; every block size): shared_device_sell_layout caches it in the source under a
// key naming (C, sigma, precision) only.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/precision.hpp"
#include "kernels/build_source.hpp"
#include "kernels/device.hpp"

namespace spmvd {

struct DeviceSellLayout {
  std::int64_t rows = 0;
  std::int64_t slice_height = 0;  // C
  std::int64_t sort_window = 1;   // sigma, <= 1 stored as 1
  Precision precision = Precision::fp64;
  // ceil(rows / C) + 1 entries, in slots: kept on the host too, for formats that need them in
  // another index type (cuSPARSE's 32-bit offsets) and for the width of ELL.
  std::vector<std::int64_t> host_slice_offsets;
  DeviceBuffer slice_offsets;  // std::int64_t, host_slice_offsets
  DeviceBuffer col_indices;    // ColIndex per slot, padding kPaddingColumn
  DeviceBuffer values;         // float or double (precision) per slot, padding 0
  DeviceBuffer permutation;    // std::int32_t per row, as SellLayout's; empty when sigma <= 1

  std::int64_t slots() const noexcept {
    return host_slice_offsets.empty() ? 0 : host_slice_offsets.back();
  }
  // Slots per row of a one-slice layout (ELL's width, the longest row); 0 without rows.
  std::int64_t width() const noexcept { return rows == 0 ? 0 : slots() / rows; }
};

// Builds SELL-C-sigma of source.host() on source.device() from source.device_csr(precision),
// equal to make_sell_layout<Value>(source.host(), slice_height, sort_window), on the device's
// stream; returns once the copy kernel has finished (the source's CSR may go with the source).
// Throws Error(invalid_argument) for slice_height < 1 or rows >= 2^31,
// Error(resource_exhausted) when device memory runs out.
std::shared_ptr<const DeviceSellLayout> make_device_sell_layout(const BuildSource& source,
                                                                Precision precision,
                                                                std::int64_t slice_height,
                                                                std::int64_t sort_window);

// The source's cache key of that layout: "sell/C=<C>/sigma=<sigma>/<precision>", sigma <= 1
// written as 1 (every such sigma builds the same arrays).
std::string device_sell_layout_key(Precision precision, std::int64_t slice_height,
                                   std::int64_t sort_window);

// make_device_sell_layout, shared through source.shared_layout under device_sell_layout_key:
// a second candidate with the same (C, sigma, precision) gets the same arrays while an
// operator holds them.
std::shared_ptr<const DeviceSellLayout> shared_device_sell_layout(const BuildSource& source,
                                                                  Precision precision,
                                                                  std::int64_t slice_height,
                                                                  std::int64_t sort_window);

}  // namespace spmvd
