// cuda_bce's hopper kernel on CUDA device 0 along both ways to a tile's descriptor
// (bce_tile_runs.hpp): computed from the tiles' runs in the launch's parameters, or loaded. The
// conformance matrices reach only the runs (no row there is cut into pieces, no partition has
// more than 8 blocks), so here: rows of 40000 entries cut into pieces at every block size, nine
// blocks, the nine-length matrix in two blocks (runs) and a block that walks its padding, both
// precisions, against the double-precision reference (label `gpu`: skips visibly without a CUDA
// device).

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <iostream>
#include <numeric>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "kernels/device.hpp"
#include "kernels/formats/cuda_bce/bce_layout.hpp"
#include "kernels/formats/cuda_bce/bce_tile_runs.hpp"
#include "kernels/formats/cuda_bce/cuda_bce_rules.hpp"
#include "kernels/tests/conformance.hpp"
#include "kernels/tests/hand_written.hpp"
#include "kernels/tests/test_matrices.hpp"
#include "partition/row_length_distribution.hpp"

namespace spmvd {
namespace {

// Rows of the given lengths over `cols` columns (distinct random columns, values in [-1, 1]).
CsrMatrix<double> rows_of(const std::vector<std::int64_t>& lengths, std::int64_t cols,
                          std::mt19937_64& rng) {
  CsrMatrix<double> m{static_cast<std::int64_t>(lengths.size()), cols, {0}, {}, {}};
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  std::vector<ColIndex> all(static_cast<std::size_t>(cols));
  std::iota(all.begin(), all.end(), ColIndex{0});
  for (const std::int64_t length : lengths) {
    std::shuffle(all.begin(), all.end(), rng);
    std::vector<ColIndex> row(all.begin(), all.begin() + length);
    std::sort(row.begin(), row.end());
    for (const ColIndex c : row) {
      m.col_indices.push_back(c);
      m.values.push_back(value(rng));
    }
    m.row_offsets.push_back(static_cast<RowOffset>(m.col_indices.size()));
  }
  return m;
}

struct HopperCandidate {
  Candidate candidate;
  bool runs = false;  // the operator passes the tiles as runs (bce_tile_runs serves)
};

HopperCandidate hopper_candidate(const CsrMatrix<double>& m,
                                 const std::vector<std::int64_t>& boundaries, std::uint32_t block,
                                 std::int64_t resident_threads) {
  const MatrixFeatures df = distribution_features(row_length_distribution(m.row_offsets), m.cols);
  const BceTiles tiles =
      make_bce_tiles(bce_block_shapes(df, boundaries), BceVariant::hopper, block, resident_threads);
  const std::vector<BceTileDescriptor> descriptors =
      bce_tile_descriptors(make_bce_layout<double>(m, boundaries, tiles.block_lanes), tiles);
  return {.candidate = {.format = kCudaBceFormatId,
                        .params = FieldSet::of(
                            CudaBceParams{.boundaries = boundaries,
                                          .variant = static_cast<std::int64_t>(BceVariant::hopper),
                                          .resident_threads = resident_threads}),
                        .launch = {.block_size = block,
                                   .threads_per_row = 1,
                                   .grid_size = static_cast<std::uint32_t>(tiles.size())}},
          .runs = bce_tile_runs(descriptors, block, resident_threads).has_value()};
}

// Built once, checked twice (testing::expect_operator_matches_reference): a split row's
// arrival counts must be back at zero for the launches after the first.
template <typename Value>
void expect_matches_reference(Device& device, const CsrMatrix<double>& matrix,
                              const Candidate& candidate, std::mt19937_64& rng) {
  const auto op = CudaBceRules::build(matrix, precision_of<Value>(), candidate, device);
  for (int round = 0; round < 2; ++round) {
    SCOPED_TRACE("round " + std::to_string(round + 1) + " on one operator");
    testing::expect_operator_matches_reference<Value>(*op, device, matrix, rng);
  }
}

struct Case {
  std::string name;
  CsrMatrix<double> matrix;
  std::vector<std::int64_t> boundaries;
  bool runs;  // the path it is for: tiles as runs (else descriptors loaded)
};

// 800 rows of 16 entries, one in 8 of them 15 long, and 3 empty rows: one block that walks its
// padding (bce_block_walks_padding) instead of reading lengths.
std::vector<std::int64_t> padding_walked_lengths() {
  std::vector<std::int64_t> lengths(800, 16);
  for (std::size_t r = 0; r < lengths.size(); r += 8) lengths[r] = 15;
  lengths.insert(lengths.end(), {0, 0, 0});
  return lengths;
}

std::vector<Case> kernel_cases(std::mt19937_64& rng) {
  // Three rows of 40000 among 300 of 0-5 entries: a block of block-wide rows, cut into pieces
  // at every block size (40000 > 512 lanes x 64 slots).
  std::vector<std::int64_t> long_rows;
  for (std::int64_t r = 0; r < 303; ++r) long_rows.push_back(r % 100 == 50 ? 40000 : r % 6);
  // Rows of 1..9 entries, 60 of each, the lengths interleaved: no block is a run of caller rows.
  std::vector<std::int64_t> nine_lengths;
  for (std::int64_t r = 0; r < 540; ++r) nine_lengths.push_back(1 + r % 9);
  const CsrMatrix<double> nine = rows_of(nine_lengths, 700, rng);
  return {{"rows in pieces", rows_of(long_rows, 50000, rng), {5}, false},
          {"nine blocks", nine, {1, 2, 3, 4, 5, 6, 7, 8}, false},
          {"two blocks", nine, {4}, true},
          {"padding walked", rows_of(padding_walked_lengths(), 2000, rng), {}, true}};
}

// Without a GPU: each case reaches the path it is for at every block size (H100's resident
// threads) and passes the builder's check, so that the GPU test below cannot pass by testing
// one path twice.
TEST(CudaBceKernels, EachCaseReachesItsPath) {
  std::mt19937_64 rng(testing::test_seed());
  for (const Case& c : kernel_cases(rng)) {
    for (const std::uint32_t block : kBceBlockSizes) {
      SCOPED_TRACE(c.name + ", block size " + std::to_string(block));
      const HopperCandidate h =
          hopper_candidate(c.matrix, c.boundaries, block, bce_resident_threads(testing::h100()));
      EXPECT_EQ(h.runs, c.runs);
      const BceTiles tiles = make_bce_tiles(
          bce_block_shapes(
              distribution_features(row_length_distribution(c.matrix.row_offsets), c.matrix.cols),
              c.boundaries),
          BceVariant::hopper, block, bce_resident_threads(testing::h100()));
      EXPECT_EQ(make_bce_layout<double>(c.matrix, c.boundaries, tiles.block_lanes).walks_padding(),
                c.name == "padding walked");
      // The builder's own check, which the GPU test's build makes first.
      EXPECT_NO_THROW(CudaBceRules::check_candidate(
          h.candidate,
          distribution_features(row_length_distribution(c.matrix.row_offsets), c.matrix.cols)));
    }
  }
}

TEST(CudaBceKernels, DescriptorsAndTileRunsMatchTheReference) {
  if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device visible";
  const auto device = make_cuda_device(0);
  const std::int64_t resident = bce_resident_threads(device->info());
  const std::uint64_t seed = testing::test_seed();
  std::cout << "cuda_bce kernels on '" << device->info().name << "', seed " << seed << "\n";
  std::mt19937_64 rng(seed);
  for (const Case& c : kernel_cases(rng)) {
    for (const std::uint32_t block : kBceBlockSizes) {
      const HopperCandidate h = hopper_candidate(c.matrix, c.boundaries, block, resident);
      SCOPED_TRACE(c.name + ", block size " + std::to_string(block));
      ASSERT_EQ(h.runs, c.runs) << "the case no longer reaches the path it is for";
      expect_matches_reference<float>(*device, c.matrix, h.candidate, rng);
      expect_matches_reference<double>(*device, c.matrix, h.candidate, rng);
    }
  }
}

// A walked padding slot gathers nothing: with x's last column Inf, the rows of 16 (which hold
// it) are Inf and the rows of 15 (columns 0-14, a padding slot instead) are their sum.
TEST(CudaBceKernels, WalkedPaddingNeverGathersX) {
  if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device visible";
  const auto device = make_cuda_device(0);
  const std::vector<std::int64_t> lengths = padding_walked_lengths();
  CsrMatrix<double> m{static_cast<std::int64_t>(lengths.size()), 16, {0}, {}, {}};
  for (const std::int64_t length : lengths) {
    for (std::int64_t c = 0; c < length; ++c) {
      m.col_indices.push_back(static_cast<ColIndex>(c));
      m.values.push_back(1.0);
    }
    m.row_offsets.push_back(static_cast<RowOffset>(m.col_indices.size()));
  }
  std::vector<double> x(16, 1.0);
  x[15] = std::numeric_limits<double>::infinity();
  const DeviceBuffer x_device = upload(*device, x.data(), x.size());
  std::vector<double> y(lengths.size(), 0.0);
  DeviceBuffer y_device(*device, y.size() * sizeof(double));
  const HopperCandidate h =
      hopper_candidate(m, {}, 256, bce_resident_threads(device->info()));
  const auto op = CudaBceRules::build(m, Precision::fp64, h.candidate, *device);
  op->apply(x_device.data(), y_device.data(), 1.0, 0.0);
  device->synchronize();
  device->copy_to_host(y.data(), y_device.data(), y.size() * sizeof(double));
  for (std::size_t r = 0; r < lengths.size(); ++r) {
    if (lengths[r] == 16) EXPECT_TRUE(std::isinf(y[r])) << "row " << r;
    if (lengths[r] < 16) EXPECT_EQ(y[r], static_cast<double>(lengths[r])) << "row " << r;
  }
}

}  // namespace
}  // namespace spmvd
