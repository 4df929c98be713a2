#include "models/occupancy.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"
#include "models/tests/test_device.hpp"

namespace spmvd {
namespace {

using testing_support::h100_like;

TEST(Occupancy, ThreadLimitedBlockOf256With32Registers) {
  // 64 warps / 8 warps per block = 8; registers: 32*32 = 1024 per warp, 16384 per
  // sub-partition / 1024 = 16 warps, x4 = 64 warps = 8 blocks (a tie, threads named first);
  // shared: 1 KiB reserved per block -> 228 blocks.
  const Occupancy o = compute_occupancy({.threads_per_block = 256, .registers_per_thread = 32,
                                         .static_shared_bytes = 0, .dynamic_shared_bytes = 0},
                                        h100_like());
  EXPECT_EQ(o.blocks_by_threads, 8);
  EXPECT_EQ(o.blocks_by_registers, 8);
  EXPECT_EQ(o.blocks_by_shared_memory, 228);
  EXPECT_EQ(o.active_blocks_per_sm, 8);
  EXPECT_EQ(o.limit, OccupancyLimit::threads);
  EXPECT_EQ(o.warps_per_block, 8);
}

TEST(Occupancy, RegisterGranularityRoundsThirtySevenRegistersUpToForty) {
  // 37 * 32 = 1184 registers per warp -> rounded to 1280 (5 units of 256); 16384 / 1280 = 12
  // warps per sub-partition, 48 per SM, / 8 warps per block = 6 blocks.
  const Occupancy o = compute_occupancy({.threads_per_block = 256, .registers_per_thread = 37},
                                        h100_like());
  EXPECT_EQ(o.blocks_by_registers, 6);
  EXPECT_EQ(o.active_blocks_per_sm, 6);
  EXPECT_EQ(o.limit, OccupancyLimit::registers);
}

TEST(Occupancy, SixtyFourRegistersAt128ThreadsGiveEightBlocks) {
  // 64 * 32 = 2048 per warp; 16384 / 2048 = 8 warps per sub-partition, 32 per SM, 4 per block.
  const Occupancy o = compute_occupancy({.threads_per_block = 128, .registers_per_thread = 64},
                                        h100_like());
  EXPECT_EQ(o.blocks_by_threads, 16);
  EXPECT_EQ(o.active_blocks_per_sm, 8);
  EXPECT_EQ(o.limit, OccupancyLimit::registers);
}

TEST(Occupancy, BlockThatExceedsTheRegisterFileCannotLaunch) {
  // 65 * 32 = 2080 -> 2304 per warp; 32 warps need 73728 > 65536 registers.
  const Occupancy o = compute_occupancy({.threads_per_block = 1024, .registers_per_thread = 65},
                                        h100_like());
  EXPECT_EQ(o.active_blocks_per_sm, 0);
  EXPECT_EQ(o.limit, OccupancyLimit::registers);
  EXPECT_THROW(iterations(10, o, h100_like()), Error);
}

TEST(Occupancy, SharedMemoryLimitCountsTheReservedKibibyte) {
  // 48 KiB static + 1 KiB reserved = 50176 bytes (a multiple of 128); 233472 / 50176 = 4.
  const Occupancy o = compute_occupancy({.threads_per_block = 64, .registers_per_thread = 16,
                                         .static_shared_bytes = 48 * 1024},
                                        h100_like());
  EXPECT_EQ(o.blocks_by_shared_memory, 4);
  EXPECT_EQ(o.active_blocks_per_sm, 4);
  EXPECT_EQ(o.limit, OccupancyLimit::shared_memory);
}

TEST(Occupancy, SharedMemoryIsRoundedToTheAllocationUnit) {
  // 1000 + 1000 + 1024 = 3024 -> 3072 bytes; 233472 / 3072 = 76, above the 32-block limit.
  const Occupancy o = compute_occupancy({.threads_per_block = 32, .registers_per_thread = 0,
                                         .static_shared_bytes = 1000,
                                         .dynamic_shared_bytes = 1000},
                                        h100_like());
  EXPECT_EQ(o.blocks_by_shared_memory, 76);
  EXPECT_EQ(o.blocks_by_threads, 64);
  EXPECT_EQ(o.active_blocks_per_sm, 32);
  EXPECT_EQ(o.limit, OccupancyLimit::blocks);
}

TEST(Occupancy, MoreThan1024ThreadsPerBlockCannotLaunch) {
  const Occupancy o = compute_occupancy({.threads_per_block = 2048}, h100_like());
  EXPECT_EQ(o.active_blocks_per_sm, 0);
}

TEST(Occupancy, RejectsADeviceWithoutPerSmLimits) {
  DeviceInfo cpu;
  try {
    compute_occupancy({.threads_per_block = 128}, cpu);
    FAIL() << "expected Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    EXPECT_STREQ(e.what(), "compute_occupancy: DeviceInfo.max_threads_per_sm is 0, must be positive");
  }
}

TEST(Occupancy, ThreadBlocksFollowPaper004Section423) {
  // CSR vector, one warp per row: ceil(1000 * 32 / 256) = 125; ELL, one thread per row:
  // ceil(1000 / 256) = 4.
  EXPECT_EQ(thread_blocks_for_rows(1000, 32, 256), 125);
  EXPECT_EQ(thread_blocks_for_rows(1000, 1, 256), 4);
  EXPECT_EQ(thread_blocks_for_rows(0, 32, 256), 0);
}

TEST(Occupancy, IterationsAreWavesOfPTimesMBlocks) {
  const Occupancy o = compute_occupancy({.threads_per_block = 256, .registers_per_thread = 32},
                                        h100_like());
  // P * M = 8 * 132 = 1056 blocks per wave.
  EXPECT_EQ(iterations(1056, o, h100_like()), 1);
  EXPECT_EQ(iterations(1057, o, h100_like()), 2);
  EXPECT_EQ(iterations(0, o, h100_like()), 0);
}

}  // namespace
}  // namespace spmvd
