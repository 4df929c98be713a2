#pragma once
// The synthetic sample matrices of calibration, and the generator library that bench/generators
// builds its spec kinds on (its fem kind is blocked_sample of a node pattern): every row of one
// length c, random or banded columns, a long row 0, dense b x b blocks; and the features of
// such a sample without tuner/. Pure C++ (g++ alone); the row generators run on all cores
// (oneTBB) and are deterministic in their seed, not in the thread count.

#include <cstdint>

#include "core/csr_matrix.hpp"
#include "core/matrix_features.hpp"

namespace spmvd {

// A rows x rows sample whose every row has row_length non-zeros: one column drawn uniformly
// from each of row_length equal bins of [0, rows) (sorted and distinct by construction, spread
// over all of x like the paper's random columns), values uniform in [-1, 1). Deterministic in
// seed. Throws Error(invalid_argument) unless 1 <= row_length <= rows.
CsrMatrix<double> uniform_row_length_sample(std::int64_t rows, std::int64_t row_length,
                                            std::uint64_t seed);

// The same drawn over cols columns, one column from each of row_length equal bins of
// [0, cols): a rows x cols sample whose x is as large (or as small) as a real matrix's whatever
// its non-zeros (the host's cpu_coo samples, models/families/cpu_gpu/cpu_gpu_fit.cpp). Throws
// Error(invalid_argument) unless 1 <= row_length <= cols <= 2^31 - 1 and 1 <= rows <= 2^31 - 1.
CsrMatrix<double> wide_uniform_row_length_sample(std::int64_t rows, std::int64_t cols,
                                                 std::int64_t row_length, std::uint64_t seed);

// The banded twin of uniform_row_length_sample(rows, row_length, seed): row r holds the
// row_length contiguous columns starting at clamp(r - row_length / 2, 0, rows - row_length),
// a band of neighbouring rows sharing nearly all of their x (the local end of
// models/locality.hpp). Values uniform in [-1, 1), deterministic in seed. Throws
// Error(invalid_argument) unless 1 <= row_length <= rows <= 2^31 - 1.
CsrMatrix<double> banded_row_length_sample(std::int64_t rows, std::int64_t row_length,
                                           std::uint64_t seed);

// banded_row_length_sample with row lengths mixed: row r holds l_r contiguous columns starting
// at clamp(r - l_r / 2, 0, rows - l_r), l_r drawn uniformly from [c - c/2, c + c/2] for
// c = mean_length (mean c), at most rows. A format that sorts rows by length (EHYB within each
// part) then visits a band's rows out of the caller's order, as it does a real matrix's; on
// rows of one length its ties keep that order and hide what the scattered y stores cost.
// Deterministic in seed. Throws Error(invalid_argument) unless 1 <= mean_length <= rows <=
// 2^31 - 1.
CsrMatrix<double> banded_mixed_length_sample(std::int64_t rows, std::int64_t mean_length,
                                             std::uint64_t seed);

// `base` with row 0 replaced by `length` columns evenly spread over all of base's columns (all
// of them when length == cols), valued as base's first entry: one row whose critical path
// dominates. Throws Error(invalid_argument) unless base has a row and an entry and
// 1 <= length <= base.cols.
CsrMatrix<double> with_long_row(const CsrMatrix<double>& base, std::int64_t length);

// Every entry (r, c, v) of `pattern` as the dense b x b block of rows r*b.. and columns c*b..,
// all of value v: a matrix that a BSR of block size b (or of any divisor of b) stores without
// fill. Throws Error(invalid_argument) unless b >= 1 and the result's rows and columns stay
// within 2^31 - 1.
CsrMatrix<double> blocked_sample(const CsrMatrix<double>& pattern, std::int64_t block_dim);

// P A P^T for a random permutation P drawn from `seed` (std::mt19937_64, Fisher-Yates): row
// and column i become p(i), so the structure, the row lengths and the diagonal are kept and
// the locality is lost. Throws Error(invalid_argument) for a non-square matrix.
CsrMatrix<double> renumber_symmetric(const CsrMatrix<double>& m, std::uint64_t seed);

// The features of such a sample (every row of one length but a long row 0, or the lengths of
// banded_mixed_length_sample), as tuner/feature_extraction would compute them, without the
// dependency on tuner/ — but the group padding, which for rows of one length is the
// distribution itself (and every rule reads it so), and the block counts
// unless count_blocks (a blocked sample: BSR's bytes are exact only with them). Counting
// blocks costs more than the rest: calibration generates ~750 M non-zeros per precision.
MatrixFeatures sample_features(const CsrMatrix<double>& sample, bool count_blocks = false);

}  // namespace spmvd
