#pragma once
// Building blocks of the stages' sample plans (models/calibration/stage.hpp): the doubling
// sizes of the COO and bytes samples, banded twins, a launched variant of one of our kernels,
// and the features of a sample known from its shape alone.

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "core/csr_matrix.hpp"
#include "core/format_id.hpp"
#include "core/matrix_features.hpp"
#include "kernels/format_rules.hpp"
#include "models/calibration/calibration_plan.hpp"

namespace spmvd {

// The doubling sizes of the COO and bytes samples.
std::vector<SampleShape> doubling_shapes(std::int64_t max_nnz, const CalibrationOptions& o);

// Appends the banded twin of every random sample (of `rows` rows, where given) whose row length
// is in `lengths` (every one of those rows where `lengths` is empty).
void add_banded_twins(PlannedVariant& v, std::span<const std::int64_t> lengths,
                      std::optional<std::int64_t> rows);

// A variant of one of our kernels launched with `block` threads per block and `lanes` per row;
// `measured`: its registers read from the compiled kernel, else the documented assumption.
PlannedVariant launched_variant(CalibrationStage stage, FormatId format,
                                const std::optional<KernelResources>& measured, std::uint32_t block,
                                int lanes);

// The features of a uniform sample of this shape, from the shape alone (no block counts: the
// rules then judge BSR's fill by its bounds).
MatrixFeatures shape_features(const SampleShape& shape);

// A random sample of the bytes stages: nnz non-zeros in rows of coo_row_length. At
// max_sample_nnz, also the latency stage's beyond-L2 pair.
SampleShape bytes_shape(const CalibrationOptions& o, std::int64_t nnz);

// The sample matrix of `shape` (SampleShape) from `seed` (shape_seed): a sample with a long row
// is its twin without, but for row 0; a renumbered band is its band renumbered.
CsrMatrix<double> make_sample(const SampleShape& shape, std::uint64_t seed);

// The seed of a shape's sample (the seed leaves out long_row: a sample with a long row is its
// twin without, but for row 0).
std::uint64_t shape_seed(std::uint64_t seed, const SampleShape& shape);

// The features the format's rules see on `sample`, its own features included: what a format
// that needs them (DIA's diagonal count, EHYB's neighbourhood growth) offers there. `common`:
// the sample's sample_features where the caller has them already.
MatrixFeatures offering_features(const FormatRules& rules, const CsrMatrix<double>& sample);
MatrixFeatures offering_features(const FormatRules& rules, const CsrMatrix<double>& sample,
                                 MatrixFeatures common);

}  // namespace spmvd
