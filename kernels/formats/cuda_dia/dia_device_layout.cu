#include "kernels/formats/cuda_dia/dia_device_layout.hpp"

#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>

#include "core/csr_matrix.hpp"
#include "core/error.hpp"
#include "kernels/cuda/cuda_check.cuh"
#include "kernels/formats/common/rules_support.hpp"

namespace spmvd {
namespace {

// Both build kernels run one thread per row, so an entry's row is the thread's own (no search
// among the row offsets), a row's duplicates are summed by one thread in CSR order (no atomics,
// the same sum as the host reference), and on a band, where neighbouring rows have their
// entries on the same diagonals, a warp's stores to diagonal d are consecutive (coalesced).
constexpr std::uint32_t kBuildBlockSize = 256;

// occupied[column - row + rows - 1] = 1 for every entry. Threads that find the same diagonal
// store the same byte, so the races are benign.
__global__ void mark_occupied_diagonals(std::int64_t rows,
                                        const RowOffset* __restrict__ row_offsets,
                                        const ColIndex* __restrict__ col_indices,
                                        std::uint8_t* __restrict__ occupied) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t row = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       row < rows; row += stride) {
    const RowOffset end = row_offsets[row + 1];
    for (RowOffset k = row_offsets[row]; k < end; ++k)
      occupied[static_cast<std::int64_t>(col_indices[k]) - row + rows - 1] = 1;
  }
}

// values[d * rows + row] += the entry, d its diagonal's index among the ascending offsets
// (lower bound; every entry's offset is among them). values is zeroed beforehand.
template <typename Value>
__global__ void scatter_to_diagonals(std::int64_t rows, std::int32_t diagonals,
                                     const RowOffset* __restrict__ row_offsets,
                                     const ColIndex* __restrict__ col_indices,
                                     const Value* __restrict__ csr_values,
                                     const std::int32_t* __restrict__ offsets,
                                     Value* __restrict__ values) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t row = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       row < rows; row += stride) {
    const RowOffset end = row_offsets[row + 1];
    for (RowOffset k = row_offsets[row]; k < end; ++k) {
      const std::int64_t offset = static_cast<std::int64_t>(col_indices[k]) - row;
      std::int32_t low = 0, high = diagonals;
      while (low < high) {
        const std::int32_t mid = low + (high - low) / 2;
        if (__ldg(offsets + mid) < offset) {
          low = mid + 1;
        } else {
          high = mid;
        }
      }
      values[static_cast<std::int64_t>(low) * rows + row] += csr_values[k];
    }
  }
}

// The occupied offsets, ascending, into `offsets` (rows + cols - 1 entries of room); returns
// how many. cub::DeviceSelect::Flagged over the counting sequence 1 - rows, 2 - rows, ...
// keeps the offsets of the flagged slots, in order: one pass over the flags at device memory
// bandwidth, and only the 4-byte count crosses to the host (it sizes the values). Copying the
// flags to the host instead would move rows + cols bytes over PCIe (~25 GB/s, against ~3 TB/s
// on the device) and scan them on one host core, ~2 bytes per row of a square matrix: for 20M
// rows ~40 MB, milliseconds against CUB's tens of microseconds, and never cheaper, since the
// flags cannot be fewer than the rows however few the diagonals.
std::int32_t compact_occupied(Device& device, cudaStream_t stream, const std::uint8_t* occupied,
                              std::int64_t slots, std::int64_t rows, std::int32_t* offsets) {
  const thrust::counting_iterator<std::int32_t> offset_of_slot(static_cast<std::int32_t>(1 - rows));
  DeviceBuffer count(device, sizeof(std::int32_t));
  std::size_t temp_bytes = 0;
  SPMVD_CUDA_CHECK(cub::DeviceSelect::Flagged(nullptr, temp_bytes, offset_of_slot, occupied,
                                              offsets, count.as<std::int32_t>(), slots, stream));
  // At least a byte: CUB reads a null temp pointer as the size query and would do nothing.
  DeviceBuffer temp(device, std::max<std::size_t>(temp_bytes, 1));
  SPMVD_CUDA_CHECK(cub::DeviceSelect::Flagged(temp.data(), temp_bytes, offset_of_slot, occupied,
                                              offsets, count.as<std::int32_t>(), slots, stream));
  std::int32_t diagonals = 0;
  device.copy_to_host(&diagonals, count.data(), sizeof diagonals);  // waits for the stream
  return diagonals;
}

}  // namespace

std::shared_ptr<const DeviceDiaLayout> build_dia_layout_on_device(Device& device,
                                                                  const DeviceCsrArrays& csr) {
  auto dia = std::make_shared<DeviceDiaLayout>();
  dia->rows = csr.rows;
  dia->cols = csr.cols;
  dia->precision = csr.precision;
  // No entry, no diagonal: nothing to store, and the multiply writes beta * y alone.
  if (csr.nnz == 0) return dia;
  const std::int64_t slots = csr.rows + csr.cols - 1;  // offsets 1 - rows .. cols - 1
  if (slots > std::numeric_limits<std::int32_t>::max())
    throw_invalid("cuda_dia: rows + cols - 1 = " + std::to_string(slots) +
                  " possible diagonals exceed the int32 offsets (2^31 - 1)");
  const auto stream = static_cast<cudaStream_t>(device.native_stream());
  const std::uint32_t grid = blocks_for(static_cast<std::uint64_t>(csr.rows), kBuildBlockSize);
  const auto* row_offsets = csr.row_offsets.as<const RowOffset>();
  const auto* col_indices = csr.col_indices.as<const ColIndex>();

  // Compacted into room for every possible diagonal, then copied to an array of its own size,
  // so the layout holds `diagonals` offsets, not rows + cols.
  {
    DeviceBuffer all_offsets(device, static_cast<std::size_t>(slots) * sizeof(std::int32_t));
    DeviceBuffer occupied(device, static_cast<std::size_t>(slots));
    SPMVD_CUDA_CHECK(cudaMemsetAsync(occupied.data(), 0, occupied.bytes(), stream));
    mark_occupied_diagonals<<<grid, kBuildBlockSize, 0, stream>>>(
        csr.rows, row_offsets, col_indices, occupied.as<std::uint8_t>());
    SPMVD_CUDA_CHECK_LAUNCH();
    dia->diagonals = compact_occupied(device, stream, occupied.as<const std::uint8_t>(), slots,
                                      csr.rows, all_offsets.as<std::int32_t>());
    dia->offsets =
        DeviceBuffer(device, static_cast<std::size_t>(dia->diagonals) * sizeof(std::int32_t));
    device.copy_on_device(dia->offsets.data(), all_offsets.data(), dia->offsets.bytes());
    device.synchronize();  // the copy has read all_offsets before it is freed
  }

  const std::size_t value_size = value_bytes(csr.precision);
  dia->values = DeviceBuffer(device, static_cast<std::size_t>(dia->diagonals) *
                                         static_cast<std::size_t>(csr.rows) * value_size);
  SPMVD_CUDA_CHECK(cudaMemsetAsync(dia->values.data(), 0, dia->values.bytes(), stream));
  if (csr.precision == Precision::fp32) {
    scatter_to_diagonals<float><<<grid, kBuildBlockSize, 0, stream>>>(
        csr.rows, dia->diagonals, row_offsets, col_indices, csr.values.as<const float>(),
        dia->offsets.as<const std::int32_t>(), dia->values.as<float>());
  } else {
    scatter_to_diagonals<double><<<grid, kBuildBlockSize, 0, stream>>>(
        csr.rows, dia->diagonals, row_offsets, col_indices, csr.values.as<const double>(),
        dia->offsets.as<const std::int32_t>(), dia->values.as<double>());
  }
  SPMVD_CUDA_CHECK_LAUNCH();
  return dia;
}

}  // namespace spmvd
