#pragma once
// The device-vs-reference check shared by kernels_conformance (CPU device) and
// kernels_conformance_gpu (CUDA device): every candidate (a few per format) of one registered
// format, built on each test matrix in fp32 and fp64, multiplied with non-trivial alpha/beta and
// with beta = 0 into a NaN-poisoned y, compared with reference_spmv in double precision.

#include <cstddef>

#include "kernels/device.hpp"
#include "kernels/format_registry.hpp"

namespace spmvd::testing {

// Candidates checked per (format, matrix): evenly spread over the format's list.
inline constexpr std::size_t kMaxCandidatesPerMatrix = 8;

// Runs the check with gtest assertions; prints the seed.
void check_format_conformance(const FormatEntry& entry, Device& device);

}  // namespace spmvd::testing
