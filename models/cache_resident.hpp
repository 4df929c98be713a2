#pragma once
// The cache-resident regime (the Hopper extension of paper 004's models, model version 6).
// Every family model is fitted on samples that stream from DRAM (paper 004's "very large
// sparse matrices"), with a launch floor below them. A matrix that fits in the 50-60 MB L2 of
// an H100/H200 runs in between: its arrays stay in L2 across multiplies, and what decides is
// each launch configuration's fixed cost and how well its few blocks fill the GPU — which
// differ between block sizes, lane counts and cuSPARSE algorithms by 10-30 % at 6-15 us.
//
// Calibration stage cache_resident times every calibrated variant (CSR vector and scalar per
// lanes and block size, COO per block size, each format_bytes record) on a few random samples
// far below L2, predicts the same samples with the finished model set, and keeps
// kappa = measured / predicted against the sample's footprint. A prediction for a matrix of
// footprint F is multiplied by kappa(F): interpolated in log F between the samples, the
// smallest sample's below them, and fading (in log F) to 1 between the largest sample and L2,
// where the family models take over unchanged.

#include <cstdint>
#include <span>
#include <vector>

#include "core/format_id.hpp"
#include "core/launch_config.hpp"
#include "core/matrix_features.hpp"
#include "core/precision.hpp"
#include "kernels/candidate.hpp"
#include "models/fitting.hpp"

namespace spmvd {

struct CacheResidentCorrection {
  FormatId format;
  FormatParams params{};
  std::uint32_t block_size = 0;       // 0: the library's own launch
  std::uint32_t threads_per_row = 0;  // 0: not a lanes-per-row kernel
  // (footprint bytes, measured / predicted), ascending in footprint.
  std::vector<SamplePoint> ratio_vs_footprint{};
  friend bool operator==(const CacheResidentCorrection&, const CacheResidentCorrection&) = default;
};

// What a multiply keeps in L2: the format's arrays (matrix_bytes, FormatRules::device_bytes),
// x and y.
double footprint_bytes(const MatrixFeatures& features, std::uint64_t matrix_bytes,
                       Precision precision) noexcept;

// The correction of the candidate's format, parameters and lanes per row with the nearest block
// size (log2 distance); nullptr when none matches.
const CacheResidentCorrection* find_correction(std::span<const CacheResidentCorrection> corrections,
                                               const Candidate& candidate) noexcept;

// kappa at this footprint (see above), clamped to [0.25, 4] so one noisy sample cannot wreck a
// ranking; 1 without points or at and beyond l2_bytes.
double correction_factor(const CacheResidentCorrection& correction, double footprint,
                         double l2_bytes) noexcept;

}  // namespace spmvd
