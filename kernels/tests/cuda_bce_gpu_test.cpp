// cuda_bce's hopper kernel on CUDA device 0 along both ways to a tile's descriptor
// (bce_tile_runs.hpp): computed from the tiles' runs in the launch's parameters, or loaded. The
// conformance matrices reach only the runs (no row there is cut into pieces, no partition has
// more than 8 blocks), so here: rows of 40000 entries cut into pieces at every block size, nine
// blocks, and the nine-length matrix in two blocks (runs), both precisions, against the
// double-precision reference (label `gpu`: skips visibly without a CUDA device).

#include <gtest/gtest.h>

#include <algorithm>
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
          {"two blocks", nine, {4}, true}};
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

}  // namespace
}  // namespace spmvd
