#include "kernels/formats/common/device_sell.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <string>

#include "core/error.hpp"
#include "kernels/cuda/cuda_check.cuh"
#include "kernels/formats/common/device_copy_launch.cuh"
#include "kernels/formats/common/sell_layout.hpp"

namespace spmvd {
namespace {

// Thread i copies sorted row i (the caller's row order[i]; i itself when order is null) into
// its lane of its slice: entry j at slice_offsets[i / C] + i % C + j*C, as make_sell_layout.
// The C threads of a slice write consecutive slots for each j; each thread reads its row's
// entries in order. The slots past a row's length keep the padding the memsets wrote.
template <typename Value>
__global__ void scatter_sell_kernel(std::int64_t rows, std::int64_t slice_height,
                                    const std::int32_t* __restrict__ order,
                                    const std::int64_t* __restrict__ slice_offsets,
                                    const std::int64_t* __restrict__ csr_row_offsets,
                                    const std::int32_t* __restrict__ csr_col_indices,
                                    const Value* __restrict__ csr_values,
                                    std::int32_t* __restrict__ col_indices,
                                    Value* __restrict__ values) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < rows;
       i += stride) {
    const std::int64_t row = order ? order[i] : i;
    std::int64_t slot = slice_offsets[i / slice_height] + i % slice_height;
    const std::int64_t end = csr_row_offsets[row + 1];
    for (std::int64_t k = csr_row_offsets[row]; k < end; ++k, slot += slice_height) {
      col_indices[slot] = csr_col_indices[k];
      values[slot] = csr_values[k];
    }
  }
}

template <typename Value>
void launch_scatter(Device& device, const DeviceCsrArrays& csr, DeviceSellLayout& sell,
                    const std::int32_t* order) {
  const auto stream = static_cast<cudaStream_t>(device.native_stream());
  scatter_sell_kernel<Value><<<catalogue_detail::copy_grid_size(sell.rows),
                               catalogue_detail::kCopyBlockSize, 0, stream>>>(
      sell.rows, sell.slice_height, order, sell.slice_offsets.as<const std::int64_t>(),
      csr.row_offsets.as<const std::int64_t>(), csr.col_indices.as<const std::int32_t>(),
      csr.values.as<const Value>(), sell.col_indices.as<std::int32_t>(), sell.values.as<Value>());
  SPMVD_CUDA_CHECK_LAUNCH();
}

}  // namespace

std::shared_ptr<const DeviceSellLayout> make_device_sell_layout(const BuildSource& source,
                                                                Precision precision,
                                                                std::int64_t slice_height,
                                                                std::int64_t sort_window) {
  const CsrMatrix<double>& matrix = source.host();
  if (slice_height < 1)
    throw_invalid("device sell layout: slice height " + std::to_string(slice_height) + " < 1");
  if (matrix.rows > kMaxDimension)
    throw_invalid("device sell layout: " + std::to_string(matrix.rows) +
                  " rows do not fit the 32-bit permutation");
  Device& device = source.device();
  const std::shared_ptr<const DeviceCsrArrays> csr = source.device_csr(precision);

  auto sell = std::make_shared<DeviceSellLayout>();
  sell->rows = matrix.rows;
  sell->slice_height = slice_height;
  sell->sort_window = std::max<std::int64_t>(sort_window, 1);
  sell->precision = precision;

  // O(rows) on the host: the row order (sorted only where sigma > 1) and each slice's width.
  const bool sorted = sort_window > 1;
  const std::vector<std::int32_t> order =
      sorted ? sell_row_order(matrix, sort_window) : std::vector<std::int32_t>();
  sell->host_slice_offsets = sell_slice_offsets(matrix, slice_height, order);
  sell->slice_offsets =
      upload(device, sell->host_slice_offsets.data(), sell->host_slice_offsets.size());
  sell->permutation = upload(device, order.data(), order.size());  // empty unless sorted

  // O(nnz) on the device: padding everywhere (column -1 is all bits set, value 0 all bits
  // clear), then the kernel overwrites the slots that hold entries.
  const auto slots = static_cast<std::size_t>(sell->slots());
  sell->col_indices = DeviceBuffer(device, slots * sizeof(ColIndex));
  sell->values = DeviceBuffer(device, slots * value_bytes(precision));
  static_assert(kPaddingColumn == -1, "the padding memset writes all bits set");
  device.fill_bytes(sell->col_indices.data(), 0xFF, sell->col_indices.bytes());
  device.fill_bytes(sell->values.data(), 0x00, sell->values.bytes());
  if (matrix.rows == 0 || matrix.nnz() == 0) return sell;
  const auto* order_on_device = sell->permutation.as<const std::int32_t>();
  if (precision == Precision::fp32)
    launch_scatter<float>(device, *csr, *sell, order_on_device);
  else
    launch_scatter<double>(device, *csr, *sell, order_on_device);
  // The kernel reads the source's CSR, which a one-off build (FormatEntry::build from a matrix)
  // frees on return: the layout is complete when this returns, so nothing relies on cudaFree's
  // implicit synchronisation. Callers wait for the build anyway.
  device.synchronize();
  return sell;
}

std::string device_sell_layout_key(Precision precision, std::int64_t slice_height,
                                   std::int64_t sort_window) {
  return "sell/C=" + std::to_string(slice_height) +
         "/sigma=" + std::to_string(std::max<std::int64_t>(sort_window, 1)) + "/" +
         std::string(to_string(precision));
}

std::shared_ptr<const DeviceSellLayout> shared_device_sell_layout(const BuildSource& source,
                                                                  Precision precision,
                                                                  std::int64_t slice_height,
                                                                  std::int64_t sort_window) {
  return source.shared_layout<DeviceSellLayout>(
      device_sell_layout_key(precision, slice_height, sort_window),
      [&] { return make_device_sell_layout(source, precision, slice_height, sort_window); });
}

}  // namespace spmvd
