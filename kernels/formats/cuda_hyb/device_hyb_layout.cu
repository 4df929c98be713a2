#include "kernels/formats/cuda_hyb/device_hyb_layout.hpp"

#include <cub/device/device_scan.cuh>
#include <cuda_runtime.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "kernels/cuda/cuda_check.cuh"
#include "kernels/formats/common/device_copy_launch.cuh"
#include "kernels/formats/common/sell_layout.hpp"

namespace spmvd {
namespace {

// Thread r copies row r: entry j < K to ELL slot j*rows + r (the threads of a warp write
// consecutive slots for each j), entries from K on to the COO remainder from
// coo_offsets[r] = the overflow of the rows before r, in CSR order, as make_hyb_layout. ELL
// slots past a short row keep the padding the memsets wrote.
template <typename Value>
__global__ void split_hyb_kernel(
    std::int64_t rows, std::int64_t ell_width, const std::int64_t* __restrict__ coo_offsets,
    const std::int64_t* __restrict__ csr_row_offsets,
    const std::int32_t* __restrict__ csr_col_indices, const Value* __restrict__ csr_values,
    std::int32_t* __restrict__ ell_col_indices, Value* __restrict__ ell_values,
    std::int32_t* __restrict__ coo_row_indices, std::int32_t* __restrict__ coo_col_indices,
    Value* __restrict__ coo_values) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t r = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; r < rows;
       r += stride) {
    const std::int64_t begin = csr_row_offsets[r], end = csr_row_offsets[r + 1];
    const std::int64_t split = end < begin + ell_width ? end : begin + ell_width;
    std::int64_t slot = r;
    for (std::int64_t k = begin; k < split; ++k, slot += rows) {
      ell_col_indices[slot] = csr_col_indices[k];
      ell_values[slot] = csr_values[k];
    }
    std::int64_t entry = coo_offsets[r];
    for (std::int64_t k = split; k < end; ++k, ++entry) {
      coo_row_indices[entry] = static_cast<std::int32_t>(r);
      coo_col_indices[entry] = csr_col_indices[k];
      coo_values[entry] = csr_values[k];
    }
  }
}

// Row r's entries past the ELL part (0 for r = rows, the scan's last item): the COO offsets
// are their exclusive sum.
struct RowOverflow {
  const std::int64_t* row_offsets;
  std::int64_t rows;
  std::int64_t ell_width;
  __host__ __device__ std::int64_t operator()(std::int64_t r) const {
    if (r >= rows) return 0;
    const std::int64_t length = row_offsets[r + 1] - row_offsets[r];
    return length > ell_width ? length - ell_width : 0;
  }
};

// coo_offsets[r] = the overflow of the rows before r, r = 0 .. rows, by one scan of the device
// CSR's offsets (the host walked the rows and uploaded 8 bytes a row before: most of the build);
// returns coo_offsets[rows], the COO part's size.
std::int64_t scan_coo_offsets(Device& device, const DeviceCsrArrays& csr, std::int64_t ell_width,
                              DeviceBuffer& coo_offsets) {
  const auto stream = static_cast<cudaStream_t>(device.native_stream());
  const auto items = static_cast<std::int64_t>(csr.rows) + 1;
  coo_offsets = DeviceBuffer(device, static_cast<std::size_t>(items) * sizeof(std::int64_t));
  const auto overflow = thrust::make_transform_iterator(
      thrust::counting_iterator<std::int64_t>(0),
      RowOverflow{csr.row_offsets.as<const std::int64_t>(), csr.rows, ell_width});
  std::size_t temp_bytes = 0;
  SPMVD_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, temp_bytes, overflow,
                                                 coo_offsets.as<std::int64_t>(), items, stream));
  // At least a byte: CUB reads a null temp pointer as the size query and would do nothing.
  DeviceBuffer temp(device, std::max<std::size_t>(temp_bytes, 1));
  SPMVD_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(temp.data(), temp_bytes, overflow,
                                                 coo_offsets.as<std::int64_t>(), items, stream));
  std::int64_t total = 0;
  device.copy_to_host(&total, coo_offsets.as<const std::int64_t>() + csr.rows, sizeof total);
  return total;  // copy_to_host waited for the stream
}

template <typename Value>
void launch_split(Device& device, const DeviceCsrArrays& csr, const DeviceBuffer& coo_offsets,
                  DeviceHybLayout& hyb) {
  const auto stream = static_cast<cudaStream_t>(device.native_stream());
  split_hyb_kernel<Value>
      <<<catalogue_detail::copy_grid_size(hyb.rows), catalogue_detail::kCopyBlockSize, 0, stream>>>(
          hyb.rows, hyb.ell_width, coo_offsets.as<const std::int64_t>(),
          csr.row_offsets.as<const std::int64_t>(), csr.col_indices.as<const std::int32_t>(),
          csr.values.as<const Value>(), hyb.ell_col_indices.as<std::int32_t>(),
          hyb.ell_values.as<Value>(), hyb.coo_row_indices.as<std::int32_t>(),
          hyb.coo_col_indices.as<std::int32_t>(), hyb.coo_values.as<Value>());
  SPMVD_CUDA_CHECK_LAUNCH();
}

}  // namespace

std::shared_ptr<const DeviceHybLayout> make_device_hyb_layout(const BuildSource& source,
                                                              Precision precision,
                                                              std::int64_t ell_width) {
  const CsrMatrix<double>& matrix = source.host();
  if (ell_width < 0)
    throw_invalid("device hyb layout: ell_width " + std::to_string(ell_width) + " < 0");
  if (matrix.rows > kMaxDimension)
    throw_invalid("device hyb layout: " + std::to_string(matrix.rows) +
                  " rows do not fit 32-bit row indices");
  Device& device = source.device();
  const std::shared_ptr<const DeviceCsrArrays> csr = source.device_csr(precision);

  auto hyb = std::make_shared<DeviceHybLayout>();
  hyb->rows = matrix.rows;
  hyb->ell_width = ell_width;
  hyb->precision = precision;

  // Where each row's overflow starts in the COO remainder, on the device.
  DeviceBuffer coo_offsets;
  hyb->coo_nnz = scan_coo_offsets(device, *csr, ell_width, coo_offsets);

  const auto ell_slots = static_cast<std::size_t>(matrix.rows * ell_width);
  const auto coo_entries = static_cast<std::size_t>(hyb->coo_nnz);
  const std::size_t value_size = value_bytes(precision);
  hyb->ell_col_indices = DeviceBuffer(device, ell_slots * sizeof(ColIndex));
  hyb->ell_values = DeviceBuffer(device, ell_slots * value_size);
  hyb->coo_row_indices = DeviceBuffer(device, coo_entries * sizeof(std::int32_t));
  hyb->coo_col_indices = DeviceBuffer(device, coo_entries * sizeof(ColIndex));
  hyb->coo_values = DeviceBuffer(device, coo_entries * value_size);
  // ELL padding everywhere (column -1 is all bits set, value 0 all bits clear); the kernel
  // overwrites the slots that hold entries and writes every COO entry.
  static_assert(kPaddingColumn == -1, "the padding memset writes all bits set");
  device.fill_bytes(hyb->ell_col_indices.data(), 0xFF, hyb->ell_col_indices.bytes());
  device.fill_bytes(hyb->ell_values.data(), 0x00, hyb->ell_values.bytes());
  if (matrix.rows == 0 || matrix.nnz() == 0) return hyb;

  if (precision == Precision::fp32)
    launch_split<float>(device, *csr, coo_offsets, *hyb);
  else
    launch_split<double>(device, *csr, coo_offsets, *hyb);
  // The kernel reads the source's CSR, which a one-off build frees with its source: wait for
  // it here (coo_offsets' free is ordered after it on the stream either way).
  device.synchronize();
  return hyb;
}

std::string device_hyb_layout_key(Precision precision, std::int64_t ell_width) {
  return "hyb/K=" + std::to_string(ell_width) + "/" + std::string(to_string(precision));
}

std::shared_ptr<const DeviceHybLayout> shared_device_hyb_layout(const BuildSource& source,
                                                                Precision precision,
                                                                std::int64_t ell_width) {
  return source.shared_layout<DeviceHybLayout>(device_hyb_layout_key(precision, ell_width), [&] {
    return make_device_hyb_layout(source, precision, ell_width);
  });
}

}  // namespace spmvd
