#pragma once
// The fastest rate at which the calibration saw a multiply stream its bytes from DRAM, and the
// least time a multiply whose bytes do not fit in L2 can take at it (correction step
// "dram_rate", correction_steps.cpp).

#include <cstdint>
#include <optional>

#include "core/device_info.hpp"
#include "core/matrix_features.hpp"
#include "core/precision.hpp"
#include "models/model_set.hpp"

namespace spmvd {

// Bytes per ms of the fastest ELL banded twin whose bytes exceed L2: at the ell grid's most
// rows, for each banded width, rows x width x (index + value) + x + y (the samples are square)
// over the grid's time x its banded ratio there, less the set's launch floor. A band gathers
// each x sector once, so above the launch its time is its bytes' streaming time: on the H100 of
// version 38's calibration (2026-12-07) 2.87-3.04 TB/s at 2^20 rows of 8 and 32 (fp32 3.04,
// fp64 2.91, both at width 32), against HBM3's 3.35. nullopt where the set calibrates no ELL
// grid with a banded ratio or no banded sample exceeds L2.
std::optional<double> dram_bytes_per_ms(const ModelSet& set, const DeviceInfo& device);

// The bytes a multiply cannot avoid moving from DRAM: its format's streamed bytes, x once and
// y once (value bytes a row and a column).
double dram_bytes(const MatrixFeatures& features, std::uint64_t matrix_bytes, Precision precision);

}  // namespace spmvd
