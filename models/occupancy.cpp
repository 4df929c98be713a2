#include "models/occupancy.hpp"

#include <algorithm>
#include <climits>
#include <string>

#include "core/error.hpp"

namespace spmvd {
namespace {

// Allocation rules of the CUDA occupancy calculator, /usr/local/cuda/include/cuda_occupancy.h
// (CUDA 13.0), which DeviceInfo does not carry because they are fixed per compute capability:
//   cudaOccRegAllocationGranularity        256 registers, allocated per warp (CC 3.x-12.x)
//   cudaOccRegAllocationMaxPerThread       256 (CC 7.x-12.x), 255 before
//   cudaOccSubPartitionsPerMultiprocessor  4 (CC 3, 5, 7-12; 2 on CC 6.0)
//   cudaOccSMemAllocationGranularity       128 bytes (CC 8.x-12.x), 256 before
//   reservedSharedMemPerBlock              1 KiB per block reserved by the driver from CC 8.0
//                                          (cudaOccSMemPerBlock: "Starting Ampere ...")
// There is no warp-allocation granularity beyond the sub-partition rounding below.
constexpr int kRegisterAllocationUnit = 256;
constexpr int kMaxThreadsPerBlock = 1024;  // CUDA Programming Guide, every CC >= 2.0

int max_registers_per_thread(const DeviceInfo& d) {
  return d.compute_capability_major >= 7 ? 256 : 255;
}
int register_sub_partitions(const DeviceInfo& d) {
  return (d.compute_capability_major == 6 && d.compute_capability_minor == 0) ? 2 : 4;
}
std::uint64_t shared_allocation_unit_bytes(const DeviceInfo& d) {
  return d.compute_capability_major >= 8 ? 128 : 256;
}
std::uint64_t reserved_shared_bytes_per_block(const DeviceInfo& d) {
  return d.compute_capability_major >= 8 ? 1024 : 0;
}

template <typename T>
T round_up(T value, T unit) {
  return (value + unit - 1) / unit * unit;
}

void require_positive(long long value, const char* field) {
  if (value <= 0) {
    throw_invalid(std::string("compute_occupancy: DeviceInfo.") + field + " is " +
                  std::to_string(value) + ", must be positive");
  }
}

// cudaOccMaxBlocksPerSMRegsLimit (partitioned global caching off, as on every CC >= 7).
int blocks_by_registers(const KernelResources& k, const DeviceInfo& d, int warps_per_block) {
  if (k.registers_per_thread <= 0) return INT_MAX;
  if (k.registers_per_thread > max_registers_per_thread(d)) return 0;
  const int sub_partitions = register_sub_partitions(d);
  const int registers_per_warp =
      round_up(k.registers_per_thread * d.warp_size, kRegisterAllocationUnit);
  // The hardware check assumes a block's warps spread over all sub-partitions at once, so the
  // warp count is rounded up to a multiple of the sub-partitions. The per-block register limit
  // (regsPerBlock) equals registers_per_sm on every CC from 5.0 to 9.0.
  const long long assumed_per_block =
      static_cast<long long>(registers_per_warp) * round_up(warps_per_block, sub_partitions);
  const long long allocated_per_block =
      static_cast<long long>(registers_per_warp) * warps_per_block;
  if (assumed_per_block > d.registers_per_sm || allocated_per_block > d.registers_per_sm) return 0;
  // Registers live in sub-partitions: a warp's registers cannot straddle two of them.
  const int warps_per_sub_partition = (d.registers_per_sm / sub_partitions) / registers_per_warp;
  return warps_per_sub_partition * sub_partitions / warps_per_block;
}

// cudaOccMaxBlocksPerSMSmemLimit with the default carveout (all of shared_memory_per_sm_bytes).
int blocks_by_shared_memory(const KernelResources& k, const DeviceInfo& d) {
  const std::uint64_t per_block =
      round_up(k.static_shared_bytes + k.dynamic_shared_bytes + reserved_shared_bytes_per_block(d),
               shared_allocation_unit_bytes(d));
  if (per_block == 0) return INT_MAX;
  if (per_block > d.shared_memory_per_sm_bytes) return 0;
  return static_cast<int>(std::min<std::uint64_t>(d.shared_memory_per_sm_bytes / per_block,
                                                  INT_MAX));
}

}  // namespace

std::string_view to_string(OccupancyLimit limit) noexcept {
  switch (limit) {
    case OccupancyLimit::threads: return "threads";
    case OccupancyLimit::blocks: return "blocks";
    case OccupancyLimit::registers: return "registers";
    case OccupancyLimit::shared_memory: return "shared_memory";
  }
  return "unknown";
}

Occupancy compute_occupancy(const KernelResources& kernel, const DeviceInfo& device) {
  if (kernel.threads_per_block <= 0) {
    throw_invalid("compute_occupancy: threads_per_block is " +
                  std::to_string(kernel.threads_per_block) + ", must be positive");
  }
  require_positive(device.warp_size, "warp_size");
  require_positive(device.max_threads_per_sm, "max_threads_per_sm");
  require_positive(device.max_blocks_per_sm, "max_blocks_per_sm");
  require_positive(device.registers_per_sm, "registers_per_sm");
  require_positive(static_cast<long long>(device.shared_memory_per_sm_bytes),
                   "shared_memory_per_sm_bytes");

  Occupancy o;
  o.warps_per_block = (kernel.threads_per_block + device.warp_size - 1) / device.warp_size;
  const bool launchable = kernel.threads_per_block <= kMaxThreadsPerBlock;
  // Paper 004 Sec. 4.2.2: TB_SM = floor(warps per SM / warps per block).
  o.blocks_by_threads =
      launchable ? (device.max_threads_per_sm / device.warp_size) / o.warps_per_block : 0;
  o.blocks_by_block_limit = device.max_blocks_per_sm;
  o.blocks_by_registers = blocks_by_registers(kernel, device, o.warps_per_block);
  o.blocks_by_shared_memory = blocks_by_shared_memory(kernel, device);

  // P = MIN{TB_SM, TB_regis, TB_shared_mem} (paper 004), plus the resident-block limit that
  // Fermi-and-later devices add.
  o.active_blocks_per_sm = o.blocks_by_threads;
  o.limit = OccupancyLimit::threads;
  const auto take = [&](int blocks, OccupancyLimit limit) {
    if (blocks < o.active_blocks_per_sm) {
      o.active_blocks_per_sm = blocks;
      o.limit = limit;
    }
  };
  take(o.blocks_by_block_limit, OccupancyLimit::blocks);
  take(o.blocks_by_registers, OccupancyLimit::registers);
  take(o.blocks_by_shared_memory, OccupancyLimit::shared_memory);
  return o;
}

std::int64_t thread_blocks_for_rows(std::int64_t rows, int threads_per_row,
                                    int threads_per_block) {
  if (rows < 0 || threads_per_row <= 0 || threads_per_block <= 0) {
    throw_invalid("thread_blocks_for_rows: rows " + std::to_string(rows) + ", threads_per_row " +
                  std::to_string(threads_per_row) + ", threads_per_block " +
                  std::to_string(threads_per_block) +
                  ": rows must be >= 0 and the thread counts positive");
  }
  // Paper 004 Sec. 4.2.3: N_TB = ceil(m * th_pW / th_pTB) (CSR vector), ceil(m / th_pTB) (ELL).
  const std::int64_t threads = rows * threads_per_row;
  return (threads + threads_per_block - 1) / threads_per_block;
}

std::int64_t iterations(std::int64_t thread_blocks, const Occupancy& occupancy,
                        const DeviceInfo& device) {
  if (occupancy.active_blocks_per_sm <= 0) {
    throw_invalid("iterations: the kernel cannot launch (0 active blocks per SM, limited by " +
                  std::string(to_string(occupancy.limit)) + ")");
  }
  if (device.sm_count <= 0) {
    throw_invalid("iterations: DeviceInfo.sm_count is " + std::to_string(device.sm_count) +
                  ", must be positive");
  }
  if (thread_blocks < 0) {
    throw_invalid("iterations: thread_blocks is " + std::to_string(thread_blocks));
  }
  // Paper 004 Sec. 4.2.4: I = ceil(N_TB / (P * M)).
  const std::int64_t per_wave =
      static_cast<std::int64_t>(occupancy.active_blocks_per_sm) * device.sm_count;
  return (thread_blocks + per_wave - 1) / per_wave;
}

}  // namespace spmvd
