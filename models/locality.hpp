#pragma once
// x locality (the Hopper extension of paper 004's empirical models; issue "Calibrated empirical
// performance models"). Paper 004 calibrates on matrices with random columns, so every gather
// of x touches its own 32-byte sector, served from L2 at best. On an H200 (L2 of 60 MB) a
// banded, stencil or FEM matrix reuses the sectors of neighbouring rows instead and runs
// 1.5-3x faster than its random-column twin of the same shape, in every format family.
//
// Calibration times, next to some random samples, a banded twin of the same shape (row r holds
// columns [r - c/2, r + c/2), models/calibration.hpp) and keeps rho = T_banded / T_random,
// as points (x, rho) against the stage's own axis (row length, ELL width, non-zeros, bytes).
// A prediction made from the random samples is then scaled by
//     factor = rho(x) + (1 - rho(x)) * w,
// a linear interpolation between the two calibrations in the randomness w in [0, 1] of the
// matrix (x_gather_randomness, x_span_randomness): w = 0 for a band (factor rho: the banded
// sample itself), w = 1 for random columns (factor 1: the random sample itself). Inside L2,
// where a cache-resident correction applies, the family model's w fades to 1 and the
// correction's own in-L2 banded ratio takes the matrix's w (models/cache_resident.hpp).

#include <cstdint>
#include <span>

#include "core/device_info.hpp"
#include "core/matrix_features.hpp"
#include "core/precision.hpp"
#include "models/fitting.hpp"

namespace spmvd {

// E[max - min] / cols of `row_length` columns drawn uniformly from [0, cols): (c - 1) / (c + 1)
// (the expected range of c uniform points), 0 for c <= 1.
double random_span_fraction(double row_length) noexcept;

// MatrixFeatures::x_sectors_per_nonzero of a matrix of `cols` columns whose rows of
// `row_length` draw their columns uniformly: S (1 - (1 - 1/S)^n) / n for n = 32 L draws from
// S = cols / 8 sectors.
double random_sectors_per_nonzero(double row_length, double cols) noexcept;

// The same of a band of `row_length` columns a row: (32 + L - 1 + 7) / 8 sectors per group.
double banded_sectors_per_nonzero(double row_length) noexcept;

// How random the matrix's x gathers are, in [0, 1], by the sectors its groups of neighbouring
// rows touch: where the matrix lies between a band and random columns of
// its row length and column count,
//   w = clamp((sectors - banded_sectors) / (random_sectors - banded_sectors), 0, 1),
// 1 where the two differ by less than 0.05 (too few columns to tell). The span misses what neighbouring rows gather together:
// a block-diagonal matrix of random blocks spans little of x yet gathers at random, and a
// 5-point stencil's three column runs each cost their own sectors (w ~ 0.08 where the span
// gives 0.002). Used by the families with a cache-resident correction (CSR vector and scalar,
// COO, the format_bytes formats; models/cache_resident.hpp).
double x_gather_randomness(const MatrixFeatures& features) noexcept;
// The same of a candidate whose kernel visits rows in another order, at the sectors per
// non-zero of that order (FormatRules::gather_sectors_per_nonzero): a sort by length that
// pulls rows of one length together from across a mesh makes its gathers random
// (delaunay_n16-x48 sorted whole: cuda_sell 1.6x slower on an H100 than the unsorted locality
// predicted).
double x_gather_randomness(const MatrixFeatures& features, double sectors_per_nonzero) noexcept;

// How random the matrix's x gathers are, in [0, 1], by the span of its rows:
//   w = clamp(mean_row_span_fraction / random_span_fraction(row_length_mean), 0, 1).
// Dividing by the span that random rows of the same mean length would have makes a random
// matrix of short rows (whose span is small by chance: 0 for one entry per row) count as
// random, as the random calibration samples of that length do; a band of c columns has span
// c / cols, so w ~ 0. Below 1.5 entries per row the span cannot tell a band from random
// columns: w = 1 (the random calibration, as before this term).
// ELL and HYB keep it: without a cache-resident correction their predictions inside L2 rest on
// the locality factor alone, and the span's larger w for small matrices (whose x few rows
// span) fits them better than the sectors do (measured on the H200 suite, docs/MODELS.md).
double x_span_randomness(const MatrixFeatures& features) noexcept;

// rho at x: linear between the points (ascending in x), constant beyond the ends; 1 when there
// are none (no banded calibration: no locality term). Never below 0.05 nor above 1.5, so one
// noisy sample cannot zero or blow up every prediction.
double banded_ratio_at(std::span<const SamplePoint> banded_ratio, double x) noexcept;

// rho(x) + (1 - rho(x)) * randomness.
double locality_factor(std::span<const SamplePoint> banded_ratio, double x,
                       double randomness) noexcept;

// The same for a ratio read from a 2-D grid (the ELL model's width x rows): rho + (1 - rho) *
// randomness, rho clamped as banded_ratio_at does.
double locality_factor(double rho, double randomness) noexcept;

}  // namespace spmvd
