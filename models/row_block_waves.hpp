#pragma once
// What a wave of row blocks takes: CUDA blocks that each reduce one row (or a piece of one)
// across all their warps (FormatPart::row_blocks; BCE's rows of kBceBlockPerRowMinWidth slots
// or more). Each is a latency chain whatever its few slots (its tile's descriptor, the row's
// length, its slots and gathers, a warp reduction, a __syncthreads and a shared-memory round
// trip, the y store), and a launch holds sm_count x blocks_per_sm of them at once, so their
// time grows by waves, not by their work: on an H100 (model version 39's suite) rajat01's 1,398
// such rows at block sizes 128, 256 and 512 (0.66, 1.3 and 2.6 waves) measured 5.6, 6.9 and
// 9.1 us in fp32, adder_dcop_05's 1,813 (0.9, 1.7, 3.4 waves) 7.1, 8.0 and 9.9 in fp64: 1.1-2.0
// us a wave, which the parts' CSR-vector price (independent warps at full occupancy, under
// 1 us a wave) missed, picking block size 256 where 128 was 20 % faster.
//
// Calibrated per block size on a sample of rows of one entry beside one row of
// kRowBlockSampleLongRow (FormatRules::row_block_candidates: the whole sample one block, every
// row a CUDA block), at two row counts: the slope of time over waves is a wave's time (H100,
// 2026-12-07, spmv-calibrate: 1.5-1.7 us in fp32 and 1.6-1.8 in fp64 at block sizes 512-128).

#include <cstdint>
#include <optional>
#include <span>
#include <tuple>

#include "core/device_info.hpp"
#include "models/family_table.hpp"
#include "models/fit_json.hpp"

namespace spmvd {

struct RowBlockWave {
  std::uint32_t block_size = 0;
  double wave_ms = 0.0;  // > 0: one wave of row blocks, net of the launch's fixed cost
  static constexpr auto kFields =
      std::tuple{declare_field("block_size", &RowBlockWave::block_size),
                 declare_field("wave_ms", &RowBlockWave::wave_ms)};
  friend bool operator==(const RowBlockWave&, const RowBlockWave&) = default;
};

// After reading: block_size is positive and wave_ms positive and finite; throws
// std::invalid_argument naming the block size otherwise.
void check_record(const RowBlockWave& v);

// The row blocks of `block_size` threads the device holds at once: sm_count x the blocks an SM
// holds by its thread and block limits (the kernels that run row blocks use little shared
// memory and registers). 0 where the device does not say.
std::int64_t concurrent_row_blocks(const DeviceInfo& device, std::uint32_t block_size) noexcept;

// How many waves `row_blocks` blocks of `block_size` take: row_blocks / concurrent_row_blocks.
// 0 where the device does not say.
double row_block_waves(const DeviceInfo& device, std::int64_t row_blocks,
                       std::uint32_t block_size) noexcept;

// The wave time at `block_size`, else at the calibrated block size nearest it; nullopt where
// none is calibrated.
std::optional<double> row_block_wave_ms(std::span<const RowBlockWave> waves,
                                        std::uint32_t block_size) noexcept;

// `spmvctl model show`'s "row_block_waves" table: per block size, a wave's time in µs.
FamilyTable row_block_waves_table(std::span<const RowBlockWave> waves);

}  // namespace spmvd
