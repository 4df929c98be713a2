#pragma once
// Active thread blocks per SM (P), thread blocks of a launch (N_TB) and iterations (waves)
// I = ceil(N_TB / (P * M)): the occupancy part of paper 004's empirical model (Sec. 4.2.2-4.2.4).
// Pure functions of a hand-writable KernelResources and DeviceInfo; no GPU is queried (the lead
// cross-checks them against cudaOccupancyMaxActiveBlocksPerMultiprocessor on the device).

#include <tuple>
#include <cstdint>
#include <string_view>

#include "core/field_set.hpp"
#include "core/device_info.hpp"

namespace spmvd {

// What one kernel asks of an SM. registers_per_thread comes from the compiled kernel
// (cudaFuncGetAttributes::numRegs, or `-Xptxas -v`); shared bytes as cudaFuncAttributes reports.
struct KernelResources {
  int threads_per_block = 0;
  int registers_per_thread = 0;
  std::uint64_t static_shared_bytes = 0;
  std::uint64_t dynamic_shared_bytes = 0;
  static constexpr auto kFields = std::tuple{
      declare_field("threads_per_block", &KernelResources::threads_per_block),
      declare_field("registers_per_thread", &KernelResources::registers_per_thread),
      declare_field("static_shared_bytes", &KernelResources::static_shared_bytes),
      declare_field("dynamic_shared_bytes", &KernelResources::dynamic_shared_bytes)};
  friend bool operator==(const KernelResources&, const KernelResources&) = default;
};

// Which resource bounds P. On a tie the earlier one in this list is named.
enum class OccupancyLimit { threads, blocks, registers, shared_memory };
std::string_view to_string(OccupancyLimit limit) noexcept;

struct Occupancy {
  int blocks_by_threads = 0;        // TB_SM of paper 004: floor(warps per SM / warps per block)
  int blocks_by_block_limit = 0;    // the device's resident-block limit per SM
  int blocks_by_registers = 0;      // TB_regis, with the allocation granularity of the device
  int blocks_by_shared_memory = 0;  // TB_shared_mem, with the allocation granularity
  int active_blocks_per_sm = 0;     // P = min of the four; 0 when the block cannot launch
  OccupancyLimit limit = OccupancyLimit::threads;
  int warps_per_block = 0;          // ceil(threads per block / warp size)
  friend bool operator==(const Occupancy&, const Occupancy&) = default;
};

// P for `kernel` on `device` (paper 004 Sec. 4.2.2, refined with the allocation rules of the
// CUDA occupancy calculator, see occupancy.cpp). Returns active_blocks_per_sm == 0 when one block
// does not fit at all (too many threads, registers or shared bytes). Throws
// Error(invalid_argument) when threads_per_block <= 0 or the device lacks the per-SM limits
// (max_threads_per_sm, max_blocks_per_sm, registers_per_sm, shared_memory_per_sm_bytes or
// warp_size not positive). O(1).
Occupancy compute_occupancy(const KernelResources& kernel, const DeviceInfo& device);

// N_TB of paper 004 Sec. 4.2.3: thread blocks needed when `threads_per_row` threads cooperate on
// each of `rows` rows (32 = one warp per row, the CSR-vector case; 1 = one thread per row, ELL).
// Throws Error(invalid_argument) on a non-positive threads_per_row or threads_per_block, or
// negative rows.
std::int64_t thread_blocks_for_rows(std::int64_t rows, int threads_per_row,
                                    int threads_per_block);

// I of paper 004 Sec. 4.2.4: ceil(N_TB / (P * M)), M = device.sm_count. Throws
// Error(invalid_argument) when P == 0 (the kernel cannot launch) or sm_count <= 0.
std::int64_t iterations(std::int64_t thread_blocks, const Occupancy& occupancy,
                        const DeviceInfo& device);

}  // namespace spmvd
