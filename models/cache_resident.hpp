#pragma once
// The cache-resident regime (the Hopper extension of paper 004's models).
// Every family model is fitted on samples that stream from DRAM (paper 004's "very large
// sparse matrices"), with a launch floor below them. A matrix that fits in the 50-60 MB L2 of
// an H100/H200 runs in between: its arrays stay in L2 across multiplies, and what decides is
// each launch configuration's fixed cost and how well its few blocks fill the GPU — which
// differ between block sizes, lane counts and cuSPARSE algorithms by 10-30 % at 6-15 us.
//
// Calibration stage cache_resident times every calibrated variant (CSR vector and scalar per
// lanes and block size, COO per block size, each format_bytes record) on a grid of random
// samples inside L2 (rows x row length, like paper 004's ELL grid), predicts the same
// samples with the finished model set, and keeps kappa = measured / predicted on that grid.
// A prediction for a matrix of R rows of mean length c is multiplied by kappa(c, R): bilinear
// in log c x log R, clamped to the grid (few long rows and many short ones differ: the first
// are latency chains, the second fill the GPU), and fading (in log footprint) to 1 between the
// largest sample's footprint and L2, where the family models take over unchanged.
//
// The grid's samples gather x at random; meshes, stencils and banded matrices gather what a
// row's neighbours just read, in fewer sectors and often from L1. Each grid sample therefore has a
// banded twin, and rho = T_banded / T_random on the same grid scales kappa
// by the matrix's x randomness w as the DRAM locality factor does: kappa * (rho + (1 - rho) w).

#include <cstdint>
#include <span>
#include <tuple>
#include <vector>

#include "core/field_set.hpp"
#include "core/format_id.hpp"
#include "core/launch_config.hpp"
#include "core/matrix_features.hpp"
#include "core/precision.hpp"
#include "kernels/candidate.hpp"
#include "models/family_table.hpp"
#include "models/fitting.hpp"

namespace spmvd {

struct CacheResidentCorrection {
  FormatId format;
  FormatParams params{};
  std::uint32_t block_size = 0;       // 0: the library's own launch
  std::uint32_t threads_per_row = 0;  // 0: not a lanes-per-row kernel
  std::uint32_t entries_per_thread = 0;  // cuda_coo's E (models/families/coo/coo_model.hpp); 0: not COO
  // measured / predicted over (row length, rows) of the samples (LogGridFit's ms holds it).
  LogGridFit ratio_vs_length_rows{};
  // T_banded / T_random over the same (row length, rows); empty: no in-L2 locality term.
  LogGridFit banded_ratio_vs_length_rows{};
  double largest_footprint_bytes = 0.0;  // of the largest sample: full kappa up to here
  static constexpr auto kFields = std::tuple{
      declare_field("format", &CacheResidentCorrection::format),
      declare_field("params", &CacheResidentCorrection::params),
      declare_field("block_size", &CacheResidentCorrection::block_size),
      declare_field("threads_per_row", &CacheResidentCorrection::threads_per_row),
      declare_field("entries_per_thread", &CacheResidentCorrection::entries_per_thread),
      declare_field("ratio_vs_length_rows", &CacheResidentCorrection::ratio_vs_length_rows),
      declare_field("banded_ratio_vs_length_rows", &CacheResidentCorrection::banded_ratio_vs_length_rows),
      declare_field("largest_footprint_bytes", &CacheResidentCorrection::largest_footprint_bytes)};
  friend bool operator==(const CacheResidentCorrection&, const CacheResidentCorrection&) = default;
};

// What a multiply keeps in L2: the format's arrays as a multiply reads them (matrix_bytes,
// FormatRules::streamed_bytes), x and y.
double footprint_bytes(const MatrixFeatures& features, std::uint64_t matrix_bytes,
                       Precision precision) noexcept;

// A critical-path step (one dependent load after another along a long row) for a matrix whose
// multiply keeps `footprint` bytes: in_l2_ms up to half of L2, beyond_l2_ms from twice L2,
// geometric between them; in_l2_ms where beyond_l2_ms is not calibrated (<= 0). In L2 a step
// is an L2 hit, beyond it the row's entries and x gathers miss to DRAM behind the rest of the
// matrix streaming: 2-5x longer on the H200.
double critical_path_step_ms(double in_l2_ms, double beyond_l2_ms, double footprint,
                             double l2_bytes) noexcept;

// The correction of the candidate's format, parameters and lanes per row with the nearest
// entries per thread (entries_per_thread: of the candidate's launch, coo_entries_per_thread;
// 0 for other formats), then block size (log2 distances); nullptr when none matches.
const CacheResidentCorrection* find_correction(std::span<const CacheResidentCorrection> corrections,
                                               const Candidate& candidate,
                                               double entries_per_thread = 0.0) noexcept;

// How much of kappa applies: 1 up to the largest sample's footprint, fading (in log footprint)
// to 0 at l2_bytes; 0 without a grid or at and beyond L2.
double correction_weight(const CacheResidentCorrection& correction, double footprint,
                         double l2_bytes) noexcept;

// kappa for this matrix (see above) at its x randomness (models/locality.hpp: 0 a band, 1
// random columns), clamped to [0.25, 4] so one noisy sample cannot wreck a ranking, applied by
// correction_weight: 1 + (kappa - 1) * weight.
double correction_factor(const CacheResidentCorrection& correction,
                         const MatrixFeatures& features, double randomness, double footprint,
                         double l2_bytes);

// The x randomness to predict with where a correction of this weight applies: kappa is
// measured against the random samples' predictions, so where it applies in full the
// prediction it corrects must be the random one (w = 1), not one that the locality factor
// already lowered for a band (which counted locality twice: small stencils, meshes and graphs
// came out 20-35 % fast); the correction's own banded ratio prices the band instead. In
// between, w + (1 - w) * weight.
double randomness_under_correction(double randomness, double weight) noexcept;

// `spmvctl model show`'s "cache_resident" table: per correction its format, parameters (or
// COO's entries per thread), block and lanes, the range of kappa and of the banded ratio over
// the grid, the grid's axes, the largest sample's footprint in MiB and the grid's quality.
FamilyTable cache_resident_table(std::span<const CacheResidentCorrection> corrections);

}  // namespace spmvd
