#include "models/calibration/sample_plan.hpp"

#include <algorithm>

#include "models/sample_generators.hpp"

namespace spmvd {
namespace {

KernelResources resources_or_assumed(const std::optional<KernelResources>& measured,
                                     std::uint32_t block_size) {
  if (measured) return *measured;
  return KernelResources{.threads_per_block = static_cast<int>(block_size),
                         .registers_per_thread = kAssumedRegistersPerThread,
                         .static_shared_bytes = 0,
                         .dynamic_shared_bytes = 0};
}

}  // namespace

std::vector<SampleShape> doubling_shapes(std::int64_t max_nnz, const CalibrationOptions& o) {
  std::vector<SampleShape> shapes;
  for (int k = o.size_steps - 1; k >= 0; --k) {
    const std::int64_t nnz = std::max<std::int64_t>(max_nnz >> k, 1);
    const std::int64_t rows = std::max<std::int64_t>(nnz / o.coo_row_length, 1);
    const SampleShape shape{.rows = rows, .row_length = std::min(o.coo_row_length, rows)};
    if (shapes.empty() || shapes.back() != shape) shapes.push_back(shape);
  }
  return shapes;
}

void add_banded_twins(PlannedVariant& v, std::span<const std::int64_t> lengths,
                      std::optional<std::int64_t> rows) {
  std::vector<SampleShape> twins;
  for (const SampleShape& s : v.samples) {
    if ((rows && s.rows != *rows) || s.long_row || s.banded) continue;
    if (!lengths.empty() &&
        std::find(lengths.begin(), lengths.end(), s.row_length) == lengths.end())
      continue;
    SampleShape twin = s;
    twin.banded = true;
    twin.renumbered_band = false;  // a renumbered band's twin is the band
    twins.push_back(twin);
  }
  v.samples.insert(v.samples.end(), twins.begin(), twins.end());
}

PlannedVariant launched_variant(CalibrationStage stage, FormatId format,
                                const std::optional<KernelResources>& measured, std::uint32_t block,
                                int lanes) {
  PlannedVariant v;
  v.stage = stage;
  v.format = format;
  v.kernel = {.resources = resources_or_assumed(measured, block), .threads_per_row = lanes};
  v.kernel.resources.threads_per_block = static_cast<int>(block);
  v.registers_measured = measured.has_value();
  return v;
}

MatrixFeatures shape_features(const SampleShape& shape) {
  MatrixFeatures f;
  f.rows = f.cols = shape.rows;
  f.nnz = shape.nnz();
  f.row_length_min = f.row_length_max = shape.row_length;
  f.row_length_mean = static_cast<double>(shape.row_length);
  if (shape.row_length > 0) f.distribution = {{.length = shape.row_length, .rows = shape.rows}};
  return f;
}

SampleShape bytes_shape(const CalibrationOptions& o, std::int64_t nnz) {
  const std::int64_t rows = std::max<std::int64_t>(nnz / o.coo_row_length, 1);
  return {.rows = rows, .row_length = std::min(o.coo_row_length, rows)};
}

std::uint64_t shape_seed(std::uint64_t seed, const SampleShape& shape) {
  return seed ^ (static_cast<std::uint64_t>(shape.rows) * 0x9e3779b97f4a7c15ULL) ^
         (static_cast<std::uint64_t>(shape.row_length) << 40);
}

MatrixFeatures offering_features(const FormatRules& rules, const CsrMatrix<double>& sample) {
  return offering_features(rules, sample, sample_features(sample));
}

MatrixFeatures offering_features(const FormatRules& rules, const CsrMatrix<double>& sample,
                                 MatrixFeatures common) {
  add_own_features(rules, sample, common);
  return common;
}

CsrMatrix<double> make_sample(const SampleShape& shape, std::uint64_t seed) {
  const std::int64_t b = std::max<std::int64_t>(shape.block_dim, 1);
  const bool band = shape.banded || shape.renumbered_band;
  const CsrMatrix<double> pattern =
      !band                 ? uniform_row_length_sample(shape.rows / b, shape.row_length / b, seed)
      : shape.mixed_lengths ? banded_mixed_length_sample(shape.rows / b, shape.row_length / b, seed)
                            : banded_row_length_sample(shape.rows / b, shape.row_length / b, seed);
  CsrMatrix<double> sample = b > 1 ? blocked_sample(pattern, b) : pattern;
  if (shape.renumbered_band && !shape.banded) sample = renumber_symmetric(sample, seed);
  return shape.long_row > 0 ? with_long_row(sample, shape.long_row) : sample;
}

}  // namespace spmvd
