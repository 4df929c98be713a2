#pragma once
// What the composed formats (kernels/format_parts.hpp) need beyond their parts' records, a
// finishing fit (calibration_finishing_fits), nothing on a CPU device where none runs:
// - the launch floors of those whose parts share one launch (models/composed_launch_floors.hpp):
//   each one's candidates on the latency stage's tiny sample (kLatencySampleRows rows of 4), one
//   per distinct parameters (at most kComposedFloorVariants), built and timed as every sample is;
// - one wave of row blocks per block size (models/row_block_waves.hpp): the row-block
//   candidates of the formats that run rows a CUDA block each (FormatRules::
//   row_block_candidates) on rows of one entry beside one of kRowBlockSampleLongRow, at two row
//   counts below the GPU's warps, the slope of time over waves;
// - the host build rates of those built on the host (models/host_build_rates.hpp): the first
//   candidate of each on kComposedBuildSample, timed with the device synchronised. The driver
//   times the builds of the formats it calibrates; it builds no composed format whole, and one
//   rate for all of these (28 ns a nonzero) let BCE's padded builds take tunings to 2x their
//   budget (H100, 2026-11-25, docs/TUNER.md).

#include <cstddef>

#include "models/calibration/calibration_plan.hpp"
#include "models/calibration/stage.hpp"

namespace spmvd {

// BCE offers two kernels (paper, hopper) on a matrix of one row length.
inline constexpr std::size_t kComposedFloorVariants = 4;

// 2^19 rows of 8 random columns (4M nonzeros) and one of kInL2LongRowLength: past the builds'
// fixed costs (allocations, thread start-up), generated in well under a second on the host's
// cores, and of two row lengths, which every composed format partitions (the strip offers
// nothing on rows of one length).
inline constexpr SampleShape kComposedBuildSample{
    .rows = std::int64_t{1} << 19, .row_length = 8, .long_row = kInL2LongRowLength};

// The long row of the row-block samples: as wide as BCE's kBceBlockPerRowMinWidth, from which
// a row of a block with fewer rows than the GPU has warps runs a CUDA block, and no wider, so
// that its chain (W / block_size slots a lane) stays under the waves of short rows it is timed
// beside.
inline constexpr std::int64_t kRowBlockSampleLongRow = 1024;

void fit_composed_formats(const FinishingFitInput& in);

}  // namespace spmvd
