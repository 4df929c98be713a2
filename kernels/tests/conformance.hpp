#pragma once
// The device-vs-reference check shared by kernels_conformance (CPU device) and
// kernels_conformance_gpu (CUDA device): every candidate (a few per format) of one registered
// format, built on each test matrix in fp32 and fp64, multiplied with non-trivial alpha/beta and
// with beta = 0 into a NaN-poisoned y, compared with reference_spmv in double precision.

#include <cstddef>
#include <random>

#include "core/csr_matrix.hpp"
#include "kernels/device.hpp"
#include "kernels/format_registry.hpp"

namespace spmvd::testing {

// Candidates checked per (format, matrix): evenly spread over the format's list.
inline constexpr std::size_t kMaxCandidatesPerMatrix = 8;

// Runs the check with gtest assertions; prints the seed.
void check_format_conformance(const FormatEntry& entry, Device& device);

// The check of one operator built from `matrix` in Value's precision, as every candidate above
// gets it: x random, beta = 0 into a NaN-poisoned y, then alpha = -0.75, beta = 1.25 on a random
// y, each against reference_spmv in double (gtest assertions naming the first rows that differ).
template <typename Value>
void expect_operator_matches_reference(SpmvOperator& op, Device& device,
                                       const CsrMatrix<double>& matrix, std::mt19937_64& rng);

}  // namespace spmvd::testing
