// cuda_strip's kernels on CUDA device 0 at separators the rules would not offer on these small
// matrices (the conformance test reaches only the one with more rows than a strip): the CSR
// part of one row, of all rows but one, and of half, at every compiled width, both precisions,
// against the double-precision reference (label `gpu`: skips visibly without a CUDA device).

#include <gtest/gtest.h>

#include <cmath>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "kernels/device.hpp"
#include "kernels/formats/cuda_csr_vector/cuda_csr_vector_rules.hpp"
#include "kernels/formats/cuda_strip/cuda_strip_rules.hpp"
#include "kernels/tests/test_matrices.hpp"

namespace spmvd {
namespace {

template <typename Value>
void expect_strip_matches_reference(Device& device, const CsrMatrix<double>& matrix,
                                    const Candidate& candidate, std::mt19937_64& rng) {
  const auto op = CudaStripRules::build(matrix, precision_of<Value>(), candidate, device);
  const CsrMatrix<Value> rounded = convert_values<Value>(matrix);
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  std::vector<Value> x(static_cast<std::size_t>(matrix.cols));
  for (Value& v : x) v = static_cast<Value>(value(rng));
  std::vector<Value> y0(static_cast<std::size_t>(matrix.rows));
  for (Value& v : y0) v = static_cast<Value>(value(rng));
  const DeviceBuffer x_device = upload(device, x.data(), x.size());
  const std::size_t y_bytes = y0.size() * sizeof(Value);
  DeviceBuffer y_device(device, y_bytes);
  for (const auto& [alpha, beta] : {std::pair{1.5, 0.0}, std::pair{-0.75, 1.25}}) {
    if (beta == 0.0) {
      device.fill_bytes(y_device.data(), 0xFF, y_bytes);  // NaN: y is write-only
    } else {
      device.copy_from_host(y_device.data(), y0.data(), y_bytes);
    }
    op->apply(x_device.data(), y_device.data(), alpha, beta);
    device.synchronize();
    std::vector<Value> y(y0.size());
    device.copy_to_host(y.data(), y_device.data(), y_bytes);
    const std::vector<double> x_double(x.begin(), x.end());
    std::vector<double> expected(y0.begin(), y0.end());
    reference_spmv(rounded, x_double.data(), expected.data(), alpha, beta);
    std::int64_t mismatches = 0;
    for (std::int64_t r = 0; r < matrix.rows; ++r) {
      double magnitude = beta == 0.0 ? 0.0 : std::abs(beta * static_cast<double>(y0[r]));
      for (RowOffset k = rounded.row_offsets[r]; k < rounded.row_offsets[r + 1]; ++k)
        magnitude += std::abs(alpha * static_cast<double>(rounded.values[k]) *
                              x_double[rounded.col_indices[k]]);
      const double bound = (sizeof(Value) == 4 ? 1e-5 : 1e-12) * magnitude;
      if (!(std::abs(static_cast<double>(y[r]) - expected[r]) <= bound) && mismatches++ < 5)
        ADD_FAILURE() << "row " << r << " (length " << matrix.row_length(r) << "), alpha "
                      << alpha << " beta " << beta << ": got " << y[r] << ", expected "
                      << expected[r];
    }
    EXPECT_EQ(mismatches, 0);
  }
}

TEST(CudaStripKernels, MatchTheReferenceAtAnySeparatorAndWidth) {
  if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device visible";
  const auto device = make_cuda_device(0);
  const std::uint64_t seed = testing::test_seed();
  std::cout << "cuda_strip kernels on '" << device->info().name << "', seed " << seed << "\n";
  std::mt19937_64 rng(seed);
  for (const testing::NamedMatrix& named : testing::conformance_matrices(seed)) {
    const CsrMatrix<double>& m = named.matrix;
    if (m.rows < 2) continue;  // no separator strictly inside
    for (const std::int64_t separator : {std::int64_t{1}, m.rows / 2, m.rows - 1}) {
      for (const std::uint32_t lanes : kCsrVectorThreadsPerRow) {
        const Candidate candidate{
            .format = kCudaStripFormatId,
            .params = FieldSet::of(CudaStripParams{
                .variant = static_cast<std::uint32_t>(lanes == 32 ? StripVariant::paper
                                                                  : StripVariant::hopper),
                .separator = separator,
                .csr_threads_per_row = lanes,
                .csr_block_size = lanes == 8 ? 128U : 256U,
                .ell_block_size = lanes == 4 ? 512U : 256U}),
            .launch = {}};
        SCOPED_TRACE(named.name + ": separator " + std::to_string(separator) + ", " +
                     std::to_string(lanes) + " lanes");
        expect_strip_matches_reference<float>(*device, m, candidate, rng);
        expect_strip_matches_reference<double>(*device, m, candidate, rng);
      }
    }
  }
}

// The hopper variant's block rows: the first block_rows sorted rows a block each (every
// compiled block size), with and without warp rows after them, both precisions; the
// conformance matrices' heavy-tail rows are longer than any block.
TEST(CudaStripKernels, BlockRowsMatchTheReference) {
  if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device visible";
  const auto device = make_cuda_device(0);
  const std::uint64_t seed = testing::test_seed();
  std::mt19937_64 rng(seed + 1);
  for (const testing::NamedMatrix& named : testing::conformance_matrices(seed)) {
    const CsrMatrix<double>& m = named.matrix;
    if (m.rows < 4) continue;
    for (const std::uint32_t block : kCsrVectorBlockSizes)
      for (const auto& [block_rows, separator] :
           {std::pair{std::int64_t{1}, std::int64_t{1}}, std::pair{std::int64_t{2}, m.rows / 2},
            std::pair{m.rows / 2, m.rows / 2}, std::pair{std::int64_t{3}, m.rows - 1}}) {
        const Candidate candidate{
            .format = kCudaStripFormatId,
            .params = FieldSet::of(CudaStripParams{
                .variant = static_cast<std::uint32_t>(StripVariant::hopper),
                .separator = separator,
                .csr_threads_per_row = 8,
                .csr_block_size = block,
                .ell_block_size = 256,
                .block_rows = block_rows}),
            .launch = {}};
        SCOPED_TRACE(named.name + ": " + std::to_string(block_rows) + " block rows of " +
                     std::to_string(block) + " threads, separator " + std::to_string(separator));
        expect_strip_matches_reference<float>(*device, m, candidate, rng);
        expect_strip_matches_reference<double>(*device, m, candidate, rng);
      }
  }
}

}  // namespace
}  // namespace spmvd
