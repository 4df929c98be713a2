// cuda_dia's layout built on CUDA device 0 from the device CSR (dia_device_layout.hpp) against
// the host reference make_dia_layout, offset by offset and value by value, in fp32 and fp64:
// a tridiagonal matrix, a band with missing entries, non-square bands both ways, matrices
// without entries, entries far off the diagonal, a 2-D 5-point grid of a million rows, and the
// conformance matrices of few diagonals; and candidates of one precision sharing one layout
// (label gpu: skips visibly without a CUDA device). y is checked by kernels_conformance_gpu.

#include <gtest/gtest.h>

#include <cstdint>
#include <iostream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/csr_matrix.hpp"
#include "kernels/build_source.hpp"
#include "kernels/device.hpp"
#include "kernels/formats/cuda_dia/cuda_dia_rules.hpp"
#include "kernels/formats/cuda_dia/dia_device_layout.hpp"
#include "kernels/formats/cuda_dia/dia_layout.hpp"
#include "kernels/tests/test_matrices.hpp"

namespace spmvd {
namespace {

// The device build exists only where CUDA is compiled.
#if SPMVD_WITH_CUDA

// Row r holds the columns r + o for o in `offsets` (ascending) that lie in [0, cols), each kept
// with probability `keep`, values uniform in [-1, 1].
CsrMatrix<double> band(std::int64_t rows, std::int64_t cols,
                       const std::vector<std::int64_t>& offsets, double keep,
                       std::mt19937_64& rng) {
  std::uniform_real_distribution<double> value(-1.0, 1.0), coin(0.0, 1.0);
  CsrMatrix<double> m{rows, cols, {0}, {}, {}};
  for (std::int64_t r = 0; r < rows; ++r) {
    for (const std::int64_t o : offsets) {
      const std::int64_t c = r + o;
      if (c < 0 || c >= cols || coin(rng) >= keep) continue;
      m.col_indices.push_back(static_cast<ColIndex>(c));
      m.values.push_back(value(rng));
    }
    m.row_offsets.push_back(static_cast<RowOffset>(m.col_indices.size()));
  }
  return m;
}

// A tridiagonal n x n matrix with (0, n - 1) and (n - 1, 0) added: diagonals 1 - n and n - 1,
// one entry each, the farthest a square matrix has.
CsrMatrix<double> tridiagonal_with_far_corners(std::int64_t n, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  CsrMatrix<double> m{n, n, {0}, {}, {}};
  for (std::int64_t r = 0; r < n; ++r) {
    if (r == n - 1) m.col_indices.push_back(0);
    for (std::int64_t c = std::max<std::int64_t>(r - 1, 0); c <= std::min(r + 1, n - 1); ++c)
      m.col_indices.push_back(static_cast<ColIndex>(c));
    if (r == 0) m.col_indices.push_back(static_cast<ColIndex>(n - 1));
    m.values.resize(m.col_indices.size());
    m.row_offsets.push_back(static_cast<RowOffset>(m.col_indices.size()));
  }
  for (double& v : m.values) v = value(rng);
  return m;
}

std::vector<testing::NamedMatrix> dia_matrices(std::mt19937_64& rng) {
  std::vector<testing::NamedMatrix> out;
  out.push_back({"tridiagonal_1000", band(1000, 1000, {-1, 0, 1}, 1.0, rng)});
  out.push_back({"band_with_holes_2000", band(2000, 2000, {-5, -2, 0, 3, 7}, 0.7, rng)});
  out.push_back({"sparse_diagonals_2000", band(2000, 2000, {-900, -1, 0, 1, 1500}, 0.01, rng)});
  out.push_back({"wide_band_300x700", band(300, 700, {-4, 0, 100, 399, 650}, 0.8, rng)});
  out.push_back({"tall_band_700x300", band(700, 300, {-650, -399, -100, 0, 4}, 0.8, rng)});
  out.push_back({"far_corners_1000", tridiagonal_with_far_corners(1000, rng)});
  out.push_back({"one_entry_1x1", band(1, 1, {0}, 1.0, rng)});
  out.push_back({"no_entries_50x60", band(50, 60, {0}, 0.0, rng)});
  out.push_back({"no_rows_0x10", CsrMatrix<double>{0, 10, {0}, {}, {}}});
  out.push_back({"no_columns_5x0", CsrMatrix<double>{5, 0, {0, 0, 0, 0, 0, 0}, {}, {}}});
  // A 1000 x 1000 grid's 5-point stencil: a million rows, thousands of blocks per kernel.
  out.push_back({"grid_5_point_1M", band(1000000, 1000000, {-1000, -1, 0, 1, 1000}, 1.0, rng)});
  for (testing::NamedMatrix& named : testing::conformance_matrices(testing::test_seed())) {
    const std::int64_t diagonals = compute_cuda_dia_features(named.matrix).diagonals;
    if (diagonals <= kDiaMaxDiagonals && diagonals * named.matrix.rows <= 4'000'000)
      out.push_back({"conformance_" + named.name, std::move(named.matrix)});
  }
  return out;
}

template <typename Value>
void expect_device_layout_equals_host(Device& device, const CsrMatrix<double>& m) {
  const DiaLayout<Value> expected = make_dia_layout<Value>(m);
  const std::shared_ptr<const DeviceCsrArrays> csr = upload_csr(device, m, precision_of<Value>());
  const std::shared_ptr<const DeviceDiaLayout> built = build_dia_layout_on_device(device, *csr);
  device.synchronize();
  EXPECT_EQ(built->rows, m.rows);
  EXPECT_EQ(built->cols, m.cols);
  EXPECT_EQ(built->precision, precision_of<Value>());
  ASSERT_EQ(built->diagonals, static_cast<std::int32_t>(expected.offsets.size()));
  ASSERT_EQ(built->offsets.bytes(), expected.offsets.size() * sizeof(std::int32_t));
  ASSERT_EQ(built->values.bytes(), expected.values.size() * sizeof(Value));

  std::vector<std::int32_t> offsets(expected.offsets.size());
  device.copy_to_host(offsets.data(), built->offsets.data(), built->offsets.bytes());
  EXPECT_EQ(offsets, expected.offsets);

  std::vector<Value> values(expected.values.size());
  device.copy_to_host(values.data(), built->values.data(), built->values.bytes());
  std::int64_t mismatches = 0;
  for (std::size_t i = 0; i < values.size(); ++i) {
    // Both sum a row's entries in CSR order from values rounded once: equal bit for bit.
    if (values[i] == expected.values[i]) continue;
    if (mismatches++ < 5) {
      const auto rows = static_cast<std::size_t>(m.rows);
      ADD_FAILURE() << "offset " << expected.offsets[i / rows] << ", row " << i % rows << ": got "
                    << values[i] << ", expected " << expected.values[i];
    }
  }
  EXPECT_EQ(mismatches, 0);
}

TEST(CudaDiaDeviceLayout, EqualsTheHostLayoutElementByElement) {
  if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device visible";
  const auto device = make_cuda_device(0);
  const std::uint64_t seed = testing::test_seed();
  std::mt19937_64 rng(seed);
  const std::vector<testing::NamedMatrix> matrices = dia_matrices(rng);
  std::cout << "cuda_dia device layouts on '" << device->info().name << "', seed " << seed << ", "
            << matrices.size() << " matrices\n";
  for (const testing::NamedMatrix& named : matrices) {
    SCOPED_TRACE(named.name);
    expect_device_layout_equals_host<float>(*device, named.matrix);
    expect_device_layout_equals_host<double>(*device, named.matrix);
  }
}

Candidate dia_candidate(std::uint32_t block_size) {
  return Candidate{.format = kCudaDiaFormatId,
                   .params = {},
                   .launch = {.block_size = block_size, .threads_per_row = 1, .grid_size = 4}};
}

// The layout cached under `key`, failing if it has to be built: null when none is held.
std::shared_ptr<const DeviceDiaLayout> held_layout(const BuildSource& source,
                                                   const std::string& key) {
  return source.shared_layout<DeviceDiaLayout>(key, [&] {
    ADD_FAILURE() << key << " is not held: built again";
    return std::shared_ptr<const DeviceDiaLayout>();
  });
}

TEST(CudaDiaBuild, CandidatesOfOnePrecisionShareOneLayout) {
  if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device visible";
  const auto device = make_cuda_device(0);
  std::mt19937_64 rng(testing::test_seed());
  const CsrMatrix<double> m = band(5000, 5000, {-3, 0, 2}, 0.9, rng);
  const BuildSource source(m, *device);

  const auto fp64_128 = CudaDiaRules::build(source, Precision::fp64, dia_candidate(128));
  const std::shared_ptr<const DeviceDiaLayout> fp64 = held_layout(source, "dia/fp64");
  ASSERT_NE(fp64, nullptr);
  EXPECT_EQ(fp64->precision, Precision::fp64);
  EXPECT_EQ(fp64->diagonals, 3);
  const auto fp64_512 = CudaDiaRules::build(source, Precision::fp64, dia_candidate(512));
  EXPECT_EQ(held_layout(source, "dia/fp64"), fp64);  // not replaced by a second build
  EXPECT_EQ(fp64_512->device_bytes(), fp64->bytes());

  const auto fp32_256 = CudaDiaRules::build(source, Precision::fp32, dia_candidate(256));
  const std::shared_ptr<const DeviceDiaLayout> fp32 = held_layout(source, "dia/fp32");
  ASSERT_NE(fp32, nullptr);
  EXPECT_EQ(fp32->precision, Precision::fp32);
  EXPECT_EQ(fp32->values.bytes() * 2, fp64->values.bytes());
}

#endif  // SPMVD_WITH_CUDA

}  // namespace
}  // namespace spmvd
