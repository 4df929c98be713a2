#include "models/row_block_waves.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "models/record_presentation.hpp"

namespace spmvd {

void check_record(const RowBlockWave& v) {
  if (v.block_size == 0 || !(v.wave_ms > 0.0) || !std::isfinite(v.wave_ms))
    throw std::invalid_argument("row block wave of block size " + std::to_string(v.block_size) +
                                ": " + std::to_string(v.wave_ms) +
                                " ms is not a positive time of a positive block size");
}

std::int64_t concurrent_row_blocks(const DeviceInfo& device, std::uint32_t block_size) noexcept {
  if (block_size == 0 || device.sm_count <= 0 || device.max_threads_per_sm <= 0) return 0;
  std::int64_t per_sm = device.max_threads_per_sm / static_cast<std::int64_t>(block_size);
  if (device.max_blocks_per_sm > 0) per_sm = std::min<std::int64_t>(per_sm, device.max_blocks_per_sm);
  return static_cast<std::int64_t>(device.sm_count) * per_sm;
}

double row_block_waves(const DeviceInfo& device, std::int64_t row_blocks,
                       std::uint32_t block_size) noexcept {
  const std::int64_t concurrent = concurrent_row_blocks(device, block_size);
  if (concurrent <= 0 || row_blocks <= 0) return 0.0;
  return static_cast<double>(row_blocks) / static_cast<double>(concurrent);
}

std::optional<double> row_block_wave_ms(std::span<const RowBlockWave> waves,
                                        std::uint32_t block_size) noexcept {
  // Nearest in powers of two.
  const auto distance = [&](const RowBlockWave& w) {
    return std::abs(std::log2(static_cast<double>(w.block_size)) -
                    std::log2(static_cast<double>(std::max(block_size, 1u))));
  };
  const RowBlockWave* nearest = nullptr;
  for (const RowBlockWave& wave : waves) {
    if (wave.block_size == block_size) return wave.wave_ms;
    if (nearest == nullptr || distance(wave) < distance(*nearest)) nearest = &wave;
  }
  if (nearest == nullptr) return std::nullopt;
  return nearest->wave_ms;
}

FamilyTable row_block_waves_table(std::span<const RowBlockWave> waves) {
  FamilyTable table{.name = "row_block_waves",
                    .title = "per block size, one wave of CUDA blocks that each reduce a row",
                    .headers = {"block size", "wave µs"}};
  for (const RowBlockWave& wave : waves)
    table.rows.push_back({std::to_string(wave.block_size), number_cell(1e3 * wave.wave_ms, "%.2f")});
  return table;
}

}  // namespace spmvd
