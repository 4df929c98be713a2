#include <cuda_pipeline.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "kernels/cuda/cuda_check.cuh"
#include "kernels/device_lock.hpp"
#include "kernels/formats/common/builder_checks.hpp"
#include "kernels/formats/common/gather_device.cuh"
#include "kernels/formats/common/rules_support.hpp"
#include "kernels/formats/common/sell_layout.hpp"
#include "kernels/formats/common/spmv_device.cuh"
#include "kernels/formats/cuda_ehyb/cuda_ehyb_rules.hpp"
#include "kernels/formats/cuda_ehyb/ehyb_layout.hpp"

namespace spmvd {
namespace {

constexpr int kWarp = 32;
static_assert(kEhybSliceRows == kWarp, "a slice is one warp's rows (paper 002, Sec. 3.2)");

// The device arrays of the cached part, as the kernels read them.
template <typename Value>
struct CachedPart {
  const std::int32_t* partition_row_begin;
  const std::int32_t* partition_slice_begin;
  const std::int64_t* slice_offsets;
  const std::uint16_t* local_columns;
  const Value* values;
  const std::int32_t* permutation;  // new row -> caller's row
};

// Alg. 3 lines 5-18 for part p, whose x slice is in `cache`: warp w starts at the part's slice w,
// then takes the next untaken one from *next_slice (the paper's balancing: rows are sorted
// descending, so early slices are the long ones). Lane l of slice s computes the part's row
// 32 (s - first slice) + l and writes it to y in the new order (y_new; the operator gathers it
// back). A row stops at its first padding slot; lanes past the part's last row only take part in
// the shuffle.
template <typename Value>
__device__ __forceinline__ void cached_part_slices(const CachedPart<Value>& part, int p,
                                                   const Value* __restrict__ cache, int* next_slice,
                                                   Value* __restrict__ y_new, Value alpha) {
  const int lane = threadIdx.x % kWarp;
  const int row_begin = __ldg(part.partition_row_begin + p);
  const int size = __ldg(part.partition_row_begin + p + 1) - row_begin;
  const int first_slice = __ldg(part.partition_slice_begin + p);
  const int slices = __ldg(part.partition_slice_begin + p + 1) - first_slice;
  int slice = threadIdx.x / kWarp;
  while (slice < slices) {
    const int local_row = slice * kWarp + lane;
    if (local_row < size) {
      const std::int64_t s = first_slice + slice;
      const std::int64_t begin = __ldg(part.slice_offsets + s);
      const Value sum = catalogue_detail::grouped_slot_sum(
          part.local_columns, part.values, begin + lane, kWarp,
          (__ldg(part.slice_offsets + s + 1) - begin) / kWarp,
          [](std::uint16_t col) { return col == kEhybPaddingLocalColumn; },
          [cache](std::uint16_t col) { return cache[col]; });
      y_new[row_begin + local_row] = alpha * sum;
    }
    int next = 0;
    if (lane == 0) next = atomicAdd(next_slice, 1);
    slice = __shfl_sync(0xffffffffu, next, 0);
  }
}

// Part p's x slice gathered into `cache` through the permutation (x stays in the caller's
// order). Four entries a thread at a time, their row numbers and then their x values loaded
// before any is stored: the gather is the start of every block, when nothing else is in
// flight on its SM, and one entry at a time waits two dependent memory latencies an entry
// (12-24 entries a thread on a 1024-thread block).
template <typename Value>
__device__ __forceinline__ void gather_x_slice(const CachedPart<Value>& part, int p,
                                               const Value* __restrict__ x, Value* cache) {
  const int row_begin = __ldg(part.partition_row_begin + p);
  const int size = __ldg(part.partition_row_begin + p + 1) - row_begin;
  const int step = static_cast<int>(blockDim.x);
  int i = threadIdx.x;
  for (; i + 3 * step < size; i += 4 * step) {
    std::int32_t row[4];
    Value value[4];
#pragma unroll
    for (int k = 0; k < 4; ++k) row[k] = __ldg(part.permutation + row_begin + i + k * step);
#pragma unroll
    for (int k = 0; k < 4; ++k) value[k] = __ldg(x + row[k]);
#pragma unroll
    for (int k = 0; k < 4; ++k) cache[i + k * step] = value[k];
  }
  for (; i < size; i += step) cache[i] = __ldg(x + __ldg(part.permutation + row_begin + i));
}

// Paper variant (Alg. 3 line 4, then lines 5-18): block p caches part p's x slice, gathered
// through the permutation (x stays in the caller's order), then computes the part's slices.
template <typename Value>
__global__ void __launch_bounds__(1024)
    ehyb_cached_kernel(CachedPart<Value> part, const Value* __restrict__ x,
                       Value* __restrict__ y_new, Value alpha) {
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  Value* cache = reinterpret_cast<Value*>(shared_bytes);
  __shared__ int next_slice;
  const int p = blockIdx.x;
  gather_x_slice(part, p, x, cache);
  if (threadIdx.x == 0) next_slice = blockDim.x / kWarp;
  __syncthreads();
  cached_part_slices(part, p, cache, &next_slice, y_new, alpha);
}

// Part p's x slice gathered into `buffer` with cp.async (no register round trip; completes at
// __pipeline_wait_prior), one element per thread and step.
template <typename Value>
__device__ __forceinline__ void issue_slice_copy(const CachedPart<Value>& part, int p,
                                                 const Value* __restrict__ x, Value* buffer) {
  const int row_begin = __ldg(part.partition_row_begin + p);
  const int size = __ldg(part.partition_row_begin + p + 1) - row_begin;
  for (int i = threadIdx.x; i < size; i += blockDim.x)
    __pipeline_memcpy_async(buffer + i, x + __ldg(part.permutation + row_begin + i), sizeof(Value));
}

// async_copy variant: persistent blocks walk parts blockIdx.x, + gridDim.x, ...; while part k
// computes from buffer k % 2, part k + 1's slice is in flight into the other buffer. One commit
// per iteration (empty past the last part) keeps wait_prior(1) meaning "all but the newest
// group", i.e. the current part's copies. The trailing barrier keeps the next iteration's copies
// out of the buffer the current one still reads.
template <typename Value>
__global__ void __launch_bounds__(1024)
    ehyb_async_cached_kernel(CachedPart<Value> part, int partitions, int buffer_entries,
                             const Value* __restrict__ x, Value* __restrict__ y_new,
                             Value alpha) {
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  Value* buffers = reinterpret_cast<Value*>(shared_bytes);
  __shared__ int next_slice;
  int p = blockIdx.x;
  if (p < partitions) issue_slice_copy(part, p, x, buffers);
  __pipeline_commit();
  for (int k = 0; p < partitions; ++k, p += gridDim.x) {
    const int upcoming = p + static_cast<int>(gridDim.x);
    if (upcoming < partitions)
      issue_slice_copy(part, upcoming, x, buffers + ((k + 1) % 2) * buffer_entries);
    __pipeline_commit();
    __pipeline_wait_prior(1);
    if (threadIdx.x == 0) next_slice = blockDim.x / kWarp;
    __syncthreads();
    cached_part_slices(part, p, buffers + (k % 2) * buffer_entries, &next_slice, y_new, alpha);
    __syncthreads();
  }
}

// ER part (Alg. 3 lines 19-20, run as its own launch after the cached kernel): thread i takes
// ER row i (slice i / 32, lane i % 32), reads x in the caller's order and adds alpha x its sum
// to y_new[new_row_map[i]]. A separate launch, not the paper's tail of the same kernel: an ER
// row's cached part is written by whichever block holds its part, and nothing orders two blocks
// of one launch, while stream order puts every cached store first. Each ER row appears once, so
// the adds need no atomics.
template <typename Value>
__global__ void ehyb_er_kernel(std::int64_t er_rows, const std::int64_t* __restrict__ slice_offsets,
                               const std::int32_t* __restrict__ columns,
                               const Value* __restrict__ values,
                               const std::int32_t* __restrict__ new_row_map,
                               const Value* __restrict__ x, Value* __restrict__ y_new,
                               Value alpha) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < er_rows; i += stride) {
    const std::int64_t slice = i / kWarp;
    const std::int64_t begin = __ldg(slice_offsets + slice);
    const Value sum =
        catalogue_detail::ell_row_sum(columns, values, x, begin + i % kWarp, kWarp,
                                      (__ldg(slice_offsets + slice + 1) - begin) / kWarp);
    y_new[__ldg(new_row_map + i)] += alpha * sum;
  }
}

constexpr std::uint32_t kErBlockSize = 256;

template <typename Value>
class CudaEhybOperator final : public SpmvOperator {
 public:
  CudaEhybOperator(const EhybLayout<Value>& layout, std::shared_ptr<const PlanPartition> partition,
                   EhybVariant variant, const LaunchConfig& launch, Device& device)
      : partition_(std::move(partition)),
        rows_(layout.rows),
        partitions_(layout.partitions),
        cache_entries_(static_cast<int>(layout.cache_entries)),
        er_rows_(layout.er_rows),
        variant_(variant),
        launch_(launch),
        er_grid_(std::min<std::uint32_t>(
            blocks_for(static_cast<std::uint64_t>(layout.er_rows), kErBlockSize),
            static_cast<std::uint32_t>(std::max(device.info().sm_count, 1)) * 8)),
        stream_(static_cast<cudaStream_t>(device.native_stream())),
        permutation_(upload(device, layout.permutation.data(), layout.permutation.size())),
        partition_row_begin_(
            upload(device, layout.partition_row_begin.data(), layout.partition_row_begin.size())),
        partition_slice_begin_(upload(device, layout.partition_slice_begin.data(),
                                      layout.partition_slice_begin.size())),
        ell_slice_offsets_(
            upload(device, layout.ell_slice_offsets.data(), layout.ell_slice_offsets.size())),
        ell_local_columns_(
            upload(device, layout.ell_local_columns.data(), layout.ell_local_columns.size())),
        ell_values_(upload(device, layout.ell_values.data(), layout.ell_values.size())),
        er_new_row_map_(upload_er_new_rows(layout, device)),
        er_slice_offsets_(
            upload(device, layout.er_slice_offsets.data(), layout.er_slice_offsets.size())),
        er_columns_(upload(device, layout.er_columns.data(), layout.er_columns.size())),
        er_values_(upload(device, layout.er_values.data(), layout.er_values.size())),
        new_index_(upload(device, layout.new_index.data(), layout.new_index.size())),
        y_new_(device, static_cast<std::size_t>(layout.rows) * sizeof(Value)) {
    const int buffers = variant_ == EhybVariant::async_copy ? 2 : 1;
    shared_bytes_ = static_cast<std::size_t>(buffers) * static_cast<std::size_t>(cache_entries_) *
                    sizeof(Value);
    // Above 48 KB of dynamic shared memory a kernel must opt in (Hopper: up to 227 KB a block).
    // The attribute belongs to the kernel, not to this operator, so it is set to the device's
    // whole opt-in allowance: another operator of a smaller cache must not shrink ours.
    if (variant_ == EhybVariant::async_copy)
      allow_dynamic_shared(ehyb_async_cached_kernel<Value>);
    else
      allow_dynamic_shared(ehyb_cached_kernel<Value>);
  }

  void apply(const void* x_raw, void* y_raw, double alpha_d, double beta_d) override {
    const auto* x = static_cast<const Value*>(x_raw);
    auto* y = static_cast<Value*>(y_raw);
    const auto alpha = static_cast<Value>(alpha_d), beta = static_cast<Value>(beta_d);
    // y is computed in the new order and gathered back (cuda_csr_rcm's remedy): stored through
    // the permutation, the rows of one y sector are written at different times (a part's rows
    // are sorted by length, then by the caller's order), and each goes back to DRAM part-filled
    // while the matrix streams through L2. H100, 2026-12-06, ncu, fp64,
    // delaunay_n16-x48-renumbered: 70.9 MB written for a 25 MB y; with the gather 0.256 ->
    // 0.160 ms (docs/BENCHMARKS.md "EHYB and the caller's row order").
    Value* y_new = y_new_.as<Value>();
    const CachedPart<Value> part{partition_row_begin_.as<const std::int32_t>(),
                                 partition_slice_begin_.as<const std::int32_t>(),
                                 ell_slice_offsets_.as<const std::int64_t>(),
                                 ell_local_columns_.as<const std::uint16_t>(),
                                 ell_values_.as<const Value>(),
                                 permutation_.as<const std::int32_t>()};
    if (variant_ == EhybVariant::async_copy)
      ehyb_async_cached_kernel<Value>
          <<<launch_.grid_size, launch_.block_size, shared_bytes_, stream_>>>(
              part, partitions_, cache_entries_, x, y_new, alpha);
    else
      ehyb_cached_kernel<Value>
          <<<static_cast<unsigned>(partitions_), launch_.block_size, shared_bytes_, stream_>>>(
              part, x, y_new, alpha);
    SPMVD_CUDA_CHECK_LAUNCH();
    if (er_rows_ > 0) {
      ehyb_er_kernel<Value><<<er_grid_, kErBlockSize, 0, stream_>>>(
          er_rows_, er_slice_offsets_.as<const std::int64_t>(),
          er_columns_.as<const std::int32_t>(), er_values_.as<const Value>(),
          er_new_row_map_.as<const std::int32_t>(), x, y_new, alpha);
      SPMVD_CUDA_CHECK_LAUNCH();
    }
    catalogue_detail::launch_gather(rows_, new_index_.as<const std::int32_t>(),
                                    y_new_.as<const Value>(), y, stream_, beta);
  }

  Precision precision() const noexcept override { return precision_of<Value>(); }
  std::shared_ptr<const PlanPartition> partition() const override { return partition_; }
  std::size_t device_bytes() const noexcept override {
    return permutation_.bytes() + partition_row_begin_.bytes() + partition_slice_begin_.bytes() +
           ell_slice_offsets_.bytes() + ell_local_columns_.bytes() + ell_values_.bytes() +
           er_new_row_map_.bytes() + er_slice_offsets_.bytes() + er_columns_.bytes() +
           er_values_.bytes() + new_index_.bytes() + y_new_.bytes();
  }

 private:
  // ER row i adds into y_new[new_index[er_row_map[i]]].
  static DeviceBuffer upload_er_new_rows(const EhybLayout<Value>& layout, Device& device) {
    std::vector<std::int32_t> new_rows(layout.er_row_map.size());
    for (std::size_t i = 0; i < new_rows.size(); ++i)
      new_rows[i] = layout.new_index[static_cast<std::size_t>(layout.er_row_map[i])];
    return upload(device, new_rows.data(), new_rows.size());
  }

  template <typename Kernel>
  void allow_dynamic_shared(Kernel* kernel) {
    int device = 0, optin = 0;
    SPMVD_CUDA_CHECK(cudaGetDevice(&device));
    SPMVD_CUDA_CHECK(
        cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
    cudaFuncAttributes attributes{};
    SPMVD_CUDA_CHECK(cudaFuncGetAttributes(&attributes, kernel));
    const int allowance = optin - static_cast<int>(attributes.sharedSizeBytes);
    if (static_cast<std::size_t>(allowance) < shared_bytes_)
      throw Error(ErrorCode::resource_exhausted,
                  "cuda_ehyb: the x cache needs " + std::to_string(shared_bytes_) +
                      " bytes of shared memory a block; this device allows " +
                      std::to_string(allowance));
    SPMVD_CUDA_CHECK(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, allowance));
  }

  std::shared_ptr<const PlanPartition> partition_;  // METIS's parts, which the plan carries
  std::int64_t rows_;
  int partitions_;
  int cache_entries_;
  std::int64_t er_rows_;
  EhybVariant variant_;
  LaunchConfig launch_;
  std::uint32_t er_grid_;
  cudaStream_t stream_;
  std::size_t shared_bytes_ = 0;
  DeviceBuffer permutation_;
  DeviceBuffer partition_row_begin_;
  DeviceBuffer partition_slice_begin_;
  DeviceBuffer ell_slice_offsets_;
  DeviceBuffer ell_local_columns_;
  DeviceBuffer ell_values_;
  DeviceBuffer er_new_row_map_;  // ER row -> the new row it adds into
  DeviceBuffer er_slice_offsets_;
  DeviceBuffer er_columns_;
  DeviceBuffer er_values_;
  DeviceBuffer new_index_;              // the gather's map: the caller's row -> its new row
  DeviceBuffer y_new_;                  // y in the new order, before the gather
};

template <typename Value>
std::unique_ptr<SpmvOperator> build_for(const BuildSource& source, const CudaEhybParams& params,
                                        const LaunchConfig& launch) {
  const CsrMatrix<double>& matrix = source.host();
  Device& device = source.device();
  const auto variant = static_cast<EhybVariant>(params.variant);
  const std::int64_t buffers = variant == EhybVariant::async_copy ? 2 : 1;
  const std::int64_t capacity =
      CudaEhybRules::cache_capacity(device.info(), sizeof(Value), buffers);
  // METIS's parts: a stored plan's or an earlier candidate's where they fit this cache, else
  // computed (issue 16: a cache hit does not run METIS again).
  // The host phase (METIS and the layout: seconds on 20M nonzeros), without the device lock.
  std::shared_ptr<const PlanPartition> partition = without_device_lock([&] {
    return ehyb_partition(source, static_cast<std::int32_t>(params.partitions), capacity);
  });
  const EhybLayout<Value> layout = without_device_lock([&] {
    return build_ehyb_layout<Value>(matrix, partition->entries,
                                    static_cast<std::int32_t>(params.partitions));
  });
  if (layout.cache_entries > capacity)
    throw Error(ErrorCode::resource_exhausted,
                "cuda_ehyb: the largest of " + std::to_string(params.partitions) + " parts has " +
                    std::to_string(layout.cache_entries) + " rows; " + std::to_string(buffers) +
                    " x-cache buffer(s) of " + std::to_string(sizeof(Value)) +
                    "-byte values hold at most " + std::to_string(capacity) + " on '" +
                    device.info().name + "'");
  return std::make_unique<CudaEhybOperator<Value>>(layout, std::move(partition), variant, launch,
                                                   device);
}

}  // namespace

std::unique_ptr<SpmvOperator> CudaEhybRules::build(const BuildSource& source, Precision precision,
                                                   const Candidate& candidate) {
  const CsrMatrix<double>& matrix = source.host();
  Device& device = source.device();
  check_candidate_format("cuda_ehyb", kCudaEhybFormatId, candidate);
  const CudaEhybParams params = params_of(candidate);
  if (matrix.rows != matrix.cols)
    throw_invalid("cuda_ehyb: the matrix is " + std::to_string(matrix.rows) + " x " +
                  std::to_string(matrix.cols) + "; EHYB partitions square matrices");
  check_params(params, matrix.rows);
  const std::uint32_t block = candidate.launch.block_size;
  if (block < 64 || block > 1024 || block % kWarp != 0)
    throw_invalid("cuda_ehyb: block_size " + std::to_string(block) +
                  " is not a multiple of 32 in [64, 1024]");
  if (candidate.launch.grid_size == 0) throw_invalid("cuda_ehyb: grid_size is 0");
  check_gpu_device("cuda_ehyb", device);
  if (precision == Precision::fp32) return build_for<float>(source, params, candidate.launch);
  return build_for<double>(source, params, candidate.launch);
}

}  // namespace spmvd
