// cuda_bce (paper 000's BCE), on the host: the layout against the paper's worked example
// (Sec. 5.1, 5.6, 6.2), the kernels' arithmetic replayed over the built arrays against the CSR
// reference (both variants, fp64 and fp32, seeded random matrices), OPA against a hand-written
// part predictor, parts(), and the rules' structural revalidation of stored plans.
// The kernels themselves: kernels_conformance_gpu.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <iterator>
#include <numeric>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/part_features.hpp"
#include "core/plan.hpp"
#include "kernels/formats/common/sell_layout.hpp"
#include "kernels/formats/cuda_bce/bce_layout.hpp"
#include "kernels/formats/cuda_bce/cuda_bce_rules.hpp"
#include "kernels/formats/cuda_csr_vector/cuda_csr_vector_rules.hpp"
#include "kernels/formats/cuda_ell/cuda_ell_rules.hpp"
#include "kernels/tests/hand_written.hpp"
#include "kernels/tests/test_matrices.hpp"
#include "partition/row_length_distribution.hpp"
#include "partition/tests/paper_000_example.hpp"
#include "tuner/feature_extraction.hpp"

namespace spmvd {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

CsrMatrix<double> paper_000_matrix() {
  CsrMatrix<double> m{10, 10, {0}, {}, {}};
  for (const auto& row : testing::kPaper000Matrix) {
    for (int c = 0; c < 10; ++c) {
      if (row[c] == 0) continue;
      m.col_indices.push_back(c);
      m.values.push_back(row[c]);
    }
    m.row_offsets.push_back(static_cast<RowOffset>(m.col_indices.size()));
  }
  return m;
}

MatrixFeatures df_features(const CsrMatrix<double>& m) {
  return distribution_features(row_length_distribution(m.row_offsets), m.cols);
}

// Rows of lengths drawn from a skewed law (many short, a few up to max_length), some empty.
CsrMatrix<double> skewed_matrix(std::mt19937_64& rng, std::int64_t rows, std::int64_t cols,
                                std::int64_t max_length) {
  CsrMatrix<double> m{rows, cols, {0}, {}, {}};
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::uniform_int_distribution<ColIndex> col(0, static_cast<ColIndex>(cols - 1));
  for (std::int64_t r = 0; r < rows; ++r) {
    const double u = unit(rng);
    std::int64_t length = u < 0.05 ? 0 : static_cast<std::int64_t>(std::pow(u, -2.5));
    length = std::min({length, max_length, cols});
    std::vector<ColIndex> columns;
    while (static_cast<std::int64_t>(columns.size()) < length) {
      const ColIndex c = col(rng);
      if (std::find(columns.begin(), columns.end(), c) == columns.end()) columns.push_back(c);
    }
    std::sort(columns.begin(), columns.end());
    for (const ColIndex c : columns) {
      m.col_indices.push_back(c);
      m.values.push_back(2.0 * unit(rng) - 1.0);
    }
    m.row_offsets.push_back(static_cast<RowOffset>(m.col_indices.size()));
  }
  return m;
}

std::vector<double> csr_reference(const CsrMatrix<double>& m, const std::vector<double>& x,
                                  const std::vector<double>& y0, double alpha, double beta) {
  std::vector<double> y(static_cast<std::size_t>(m.rows));
  for (std::int64_t r = 0; r < m.rows; ++r) {
    double sum = 0;
    for (RowOffset k = m.row_offsets[r]; k < m.row_offsets[r + 1]; ++k)
      sum += m.values[k] * x[m.col_indices[k]];
    y[r] = beta == 0.0 ? alpha * sum : alpha * sum + beta * y0[r];
  }
  return y;
}

// The H100's resident threads (132 SMs x 2048): the tiling every H100 candidate carries.
const std::int64_t kH100ResidentThreads = bce_resident_threads(testing::h100());

// `short_rows` rows of 2-6 entries and, spread among them, `long_rows` rows of long_length
// (+- 10%) and as many of a quarter of it: a few very long rows among many short ones
// (circuit-3M's shape, scaled to a unit test).
CsrMatrix<double> few_long_rows_matrix(std::mt19937_64& rng, std::int64_t short_rows,
                                       std::int64_t long_rows, std::int64_t long_length,
                                       std::int64_t cols) {
  std::vector<std::int64_t> lengths;
  std::uniform_int_distribution<std::int64_t> short_length(2, 6);
  std::uniform_int_distribution<std::int64_t> jitter(-long_length / 10, long_length / 10);
  for (std::int64_t r = 0; r < short_rows; ++r) lengths.push_back(short_length(rng));
  for (std::int64_t r = 0; r < long_rows; ++r) {
    lengths.push_back(std::min(cols, long_length + jitter(rng)));
    lengths.push_back(std::min(cols, long_length / 4 + jitter(rng) / 4));
  }
  std::shuffle(lengths.begin(), lengths.end(), rng);
  CsrMatrix<double> m{static_cast<std::int64_t>(lengths.size()), cols, {0}, {}, {}};
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::vector<ColIndex> all(static_cast<std::size_t>(cols));
  std::iota(all.begin(), all.end(), ColIndex{0});
  for (const std::int64_t length : lengths) {
    std::vector<ColIndex> columns;
    std::sample(all.begin(), all.end(), std::back_inserter(columns), length, rng);
    for (const ColIndex c : columns) {
      m.col_indices.push_back(c);
      m.values.push_back(2.0 * unit(rng) - 1.0);
    }
    m.row_offsets.push_back(static_cast<RowOffset>(m.col_indices.size()));
  }
  return m;
}

// Every 2nd distinct row length below the longest: a partition with many blocks of all widths.
std::vector<std::int64_t> every_other_length(const MatrixFeatures& f) {
  std::vector<std::int64_t> out;
  for (std::size_t i = 0; i + 1 < f.distribution.size(); i += 2)
    out.push_back(f.distribution[i].length);
  return out;
}

// Builds BCE with `boundaries`, replays the variant's kernel on the host and compares with the
// CSR reference, with beta = 0 over a NaN y (write-only) and beta = 0.5.
// Returns the tiles' lanes per block (empty rows last).
template <typename Value>
std::vector<std::int32_t> expect_matches_csr(const CsrMatrix<double>& m,
                                             const std::vector<std::int64_t>& boundaries,
                                             BceVariant variant, std::uint32_t block_size,
                                             const std::string& what,
                                             std::int64_t resident_threads = kH100ResidentThreads) {
  SCOPED_TRACE(what + " variant " + std::to_string(static_cast<int>(variant)) + " block " +
               std::to_string(block_size) + " k-1 = " + std::to_string(boundaries.size()) +
               " resident threads " + std::to_string(resident_threads));
  const BceLayout<Value> bce = make_bce_layout<Value>(m, boundaries);
  const BceTiles tiles =
      make_bce_tiles(bce.shapes_with_empty_rows(), variant, block_size, resident_threads);
  std::vector<double> x(static_cast<std::size_t>(m.cols));
  for (std::size_t c = 0; c < x.size(); ++c) x[c] = std::cos(0.37 * static_cast<double>(c));
  std::vector<double> y0(static_cast<std::size_t>(m.rows));
  for (std::size_t r = 0; r < y0.size(); ++r) y0[r] = 0.25 * static_cast<double>(r % 7) - 1.0;
  const std::vector<Value> xv(x.begin(), x.end());
  for (const double beta : {0.0, 0.5}) {
    std::vector<Value> y(y0.begin(), y0.end());
    if (beta == 0.0) std::fill(y.begin(), y.end(), std::numeric_limits<Value>::quiet_NaN());
    bce_reference_multiply<Value>(bce, tiles, variant, block_size, xv.data(), y.data(),
                                  Value(1.5), static_cast<Value>(beta));
    const std::vector<double> want = csr_reference(m, x, y0, 1.5, beta);
    const double tolerance = std::is_same_v<Value, float> ? 1e-4 : 1e-12;
    for (std::int64_t r = 0; r < m.rows; ++r) {
      const double scale = 1.0 + static_cast<double>(m.row_length(r));
      EXPECT_NEAR(y[r], want[r], tolerance * scale) << "row " << r << " beta " << beta;
      if (std::abs(y[r] - want[r]) > tolerance * scale) return tiles.block_lanes;
    }
  }
  return tiles.block_lanes;
}

// T(part) for the OPA tests: a fixed cost per block (a launch's worth) plus padded slots over a
// row floor, the shape of paper 000's T_c with a per-block overhead, so OPA has a real trade-off.
class HandWrittenPredictor final : public PartTimePredictor {
 public:
  std::optional<double> part_ms(const FormatPart& part) const override {
    ++calls;
    if (part.candidate.format == kCudaCsrVectorFormatId) {
      // A warp a row: the chain of the longest row over 32 lanes, 8 rows a 256-thread block.
      const double blocks = std::ceil(static_cast<double>(part.features.rows) / 8.0);
      return 0.004 + 1e-6 * blocks * static_cast<double>(part.features.row_length_max) / 4.0 +
             2e-7 * static_cast<double>(part.features.nnz);
    }
    if (part.candidate.format != kCudaEllFormatId) return std::nullopt;
    const auto width = CudaEllRules::params_of(part.candidate).ell_width;
    const double rows = static_cast<double>(std::max<std::int64_t>(part.features.rows, 64));
    return 0.004 + 1e-6 * rows * width + 2e-7 * static_cast<double>(part.features.nnz);
  }
  mutable std::atomic<std::int64_t> calls = 0;  // part_ms is called from several threads
};

class NoPredictor final : public PartTimePredictor {
 public:
  std::optional<double> part_ms(const FormatPart&) const override { return std::nullopt; }
};

double predicted_ms(const CudaBceRules& rules, const MatrixFeatures& f,
                    const std::vector<std::int64_t>& boundaries,
                    const PartTimePredictor& predictor) {
  const Candidate c{.format = kCudaBceFormatId,
                    .params = FieldSet::of(CudaBceParams{.boundaries = boundaries,
                                                         .variant = 1,
                                                         .resident_threads = kH100ResidentThreads}),
                    .launch = {.block_size = 256, .threads_per_row = 1, .grid_size = 1}};
  double total = 0;
  for (const FormatPart& part : rules.parts(f, c)) total += *predictor.part_ms(part);
  return total;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(CudaBceLayout, PaperWorkedExampleGivesThePapersRowNoApAwAndBlocks) {
  const CsrMatrix<double> m = paper_000_matrix();
  // Sec. 5.1: B = [2, 3, 2, 1, 0, 1, 1, 0, 0, 0].
  EXPECT_THAT(row_length_distribution(m.row_offsets).sets,
              ElementsAre(RowLengthCount{1, 2}, RowLengthCount{2, 3}, RowLengthCount{3, 2},
                          RowLengthCount{4, 1}, RowLengthCount{6, 1}, RowLengthCount{7, 1}));
  const std::vector<std::int64_t> boundaries{2, 4};
  const BceLayout<double> bce = make_bce_layout<double>(m, boundaries);
  // Sec. 6.2: rowNo = (1, 3, 4, 6, 10, 2, 7, 8, 5, 9) (1-based), Aw = (2, 4, 7), Ap = (0, 5, 8, 10).
  EXPECT_THAT(bce.row_no, ElementsAre(0, 2, 3, 5, 9, 1, 6, 7, 4, 8));
  EXPECT_THAT(bce.block_widths, ElementsAre(2, 4, 7));
  EXPECT_THAT(bce.block_row_offsets, ElementsAre(0, 5, 8, 10));
  // blockPos[i] = E(C_1) + ... + E(C_i): 5*2, 3*4, 2*7.
  EXPECT_THAT(bce.block_slot_offsets, ElementsAre(0, 10, 22, 36));
  // C_1 = {r1, r3, r4, r6, r10}, column-major: first entries, then second entries (padding 0).
  const std::vector<double> c1_values(bce.values.begin(), bce.values.begin() + 10);
  EXPECT_THAT(c1_values, ElementsAre(3, 4, 12, -6, 3, 1, 0, 3, 0, 7));
  const std::vector<ColIndex> c1_offsets(bce.offsets.begin(), bce.offsets.begin() + 10);
  EXPECT_THAT(c1_offsets, ElementsAre(0, 1, 3, 6, 2, 4, kPaddingColumn, 4, kPaddingColumn, 5));
  // C_3 = {r5, r9}: r5 has 7 entries, r9 6 (one padding slot, the last).
  const std::vector<double> c3_values(bce.values.begin() + 22, bce.values.end());
  EXPECT_THAT(c3_values, ElementsAre(-1, 2, 8, 1, 2, 5, 5, 3, 2, 7, 7, 4, 9, 0));
  EXPECT_THAT(bce.row_lengths, ElementsAre(2, 1, 2, 1, 2, 3, 3, 4, 7, 6));
  // The DF view of the same partition.
  EXPECT_THAT(bce_block_shapes(df_features(m), boundaries),
              ElementsAre(BceBlockShape{5, 2}, BceBlockShape{3, 4}, BceBlockShape{2, 7},
                          BceBlockShape{0, 0}));
}

TEST(CudaBceLayout, PaperWorkedExampleMultipliesAsCsrInBothVariants) {
  const CsrMatrix<double> m = paper_000_matrix();
  for (const auto variant : {BceVariant::paper, BceVariant::hopper}) {
    expect_matches_csr<double>(m, {2, 4}, variant, 128, "paper example");
    expect_matches_csr<double>(m, {}, variant, 128, "paper example, one block");
  }
}

TEST(CudaBceLayout, HostReplayOfBothKernelsEqualsCsrOnRandomMatrices) {
  const std::uint64_t seed = testing::test_seed();
  std::cout << "seed " << seed << " (SPMVD_TEST_SEED)\n";
  std::mt19937_64 rng(seed);
  const CudaBceRules rules;
  // Skewed matrices with empty rows, wide blocks (lanes 2 and 4) and blocks over several tiles.
  for (const auto& [rows, cols, max_length] :
       {std::tuple{700, 300, 120}, std::tuple{3000, 5000, 2000}, std::tuple{64, 40, 40}}) {
    const CsrMatrix<double> m = skewed_matrix(rng, rows, cols, max_length);
    const MatrixFeatures f = df_features(m);
    const std::vector<std::vector<std::int64_t>> partitions{
        {}, every_other_length(f),
        CudaBceRules::params_of(rules.candidates(f, testing::h100()).front()).boundaries};
    for (const auto& boundaries : partitions) {
      for (const auto variant : {BceVariant::paper, BceVariant::hopper}) {
        for (const std::uint32_t block : {32u, 128u}) {
          expect_matches_csr<double>(m, boundaries, variant, block, "skewed " + std::to_string(rows));
          expect_matches_csr<float>(m, boundaries, variant, block, "skewed fp32");
        }
      }
    }
  }
  // The conformance suite's shapes (no rows, no columns, no entries, one long row, ...).
  for (const testing::NamedMatrix& named : testing::conformance_matrices(seed)) {
    const MatrixFeatures f = df_features(named.matrix);
    for (const auto variant : {BceVariant::paper, BceVariant::hopper}) {
      expect_matches_csr<double>(named.matrix, {}, variant, 128, named.name);
      expect_matches_csr<double>(named.matrix, every_other_length(f), variant, 256, named.name);
    }
  }
}

// What kernels_conformance_gpu asserts before it launches, checked here without a GPU: every
// candidate the rules offer on the extracted features is valid, passes the builder's check
// against the matrix's own DF, launches exactly its tiles, and device_bytes bounds the arrays
// the operator uploads.
TEST(CudaBceRules, EveryCandidateOnTheConformanceMatricesBuildsAndIsBoundedByDeviceBytes) {
  const CudaBceRules rules;
  for (const testing::NamedMatrix& named : testing::conformance_matrices(testing::test_seed())) {
    SCOPED_TRACE(named.name);
    const MatrixFeatures features = extract_features(named.matrix);
    const std::vector<Candidate> all = rules.candidates(features, testing::h100());
    ASSERT_EQ(all.size(), 6u);
    for (const Candidate& c : all) {
      EXPECT_TRUE(rules.is_valid(c, features, testing::h100()));
      EXPECT_NO_THROW(CudaBceRules::check_candidate(c, df_features(named.matrix)));
      const CudaBceParams params = CudaBceRules::params_of(c);
      const auto variant = static_cast<BceVariant>(params.variant);
      const BceLayout<double> bce = make_bce_layout<double>(named.matrix, params.boundaries);
      EXPECT_EQ(params.resident_threads, kH100ResidentThreads);
      const BceTiles tiles = make_bce_tiles(bce.shapes_with_empty_rows(), variant,
                                            c.launch.block_size, params.resident_threads);
      EXPECT_EQ(std::max<std::int64_t>(tiles.size(), 1), c.launch.grid_size);
      const std::uint64_t k = static_cast<std::uint64_t>(bce.blocks());
      const std::uint64_t uploaded =
          tiles.size() * 8u + (k + 2) * 8 + (k + 1) * 8 + (k + 1) * 8 + (k + 1) * 4 +
          (variant == BceVariant::hopper ? bce.row_lengths.size() * 4 : 0) +
          bce.row_no.size() * 4 + bce.offsets.size() * 4 + bce.values.size() * 8;
      EXPECT_LE(uploaded, rules.device_bytes(features, Precision::fp64, c));
    }
  }
}

TEST(CudaBceLayout, WideBlocksShareRowsBetweenLanesOnlyInTheHopperVariant) {
  const std::int64_t h100 = kH100ResidentThreads;
  EXPECT_EQ(h100, 132 * 2048);
  EXPECT_EQ(bce_resident_threads(testing::eight_core_cpu()), 0);
  EXPECT_EQ(bce_lanes_per_row(BceVariant::paper, {50, 50000}, 256, h100), 1);
  EXPECT_EQ(bce_lanes_per_row(BceVariant::hopper, {1000, 15}, 256, h100), 1);
  EXPECT_EQ(bce_lanes_per_row(BceVariant::hopper, {1000, 16}, 256, h100), 2);
  EXPECT_EQ(bce_lanes_per_row(BceVariant::hopper, {1000, 32}, 256, h100), 4);
  // 300 rows of width 40 and 10 empty rows, 128 threads a tile: 3 + 1 tiles on paper, 10 + 1
  // (32 rows a tile at 4 lanes) on hopper.
  const std::vector<BceBlockShape> shapes{{300, 40}, {10, 0}};
  EXPECT_EQ(bce_tile_count(shapes, BceVariant::paper, 128, h100), 4);
  EXPECT_EQ(bce_tile_count(shapes, BceVariant::hopper, 128, h100), 11);
  const BceTiles tiles = make_bce_tiles(shapes, BceVariant::hopper, 128, h100);
  EXPECT_EQ(tiles.size(), 11);
  EXPECT_EQ(tiles.tile_first_row[9], 288);
  EXPECT_EQ(tiles.tile_block[10], 1);
  EXPECT_EQ(tiles.tile_first_row[10], 300);
}

TEST(CudaBceLayout, HopperLanesGrowToAWarpOrABlockPerRowWhereTheRowsCannotFillTheGpu) {
  const std::int64_t h100 = kH100ResidentThreads;  // 270336 threads, 8448 warps
  const auto lanes = [&](std::int64_t rows, std::int64_t width, std::uint32_t block = 256) {
    return bce_lanes_per_row(BceVariant::hopper, {rows, width}, block, h100);
  };
  // circuit-3M's widest block: a CUDA block a row, the chain 50000 / 256 = 196 gathers.
  EXPECT_EQ(lanes(50, 50000), 256);
  EXPECT_EQ(lanes(50, 50000, 128), 128);
  EXPECT_EQ(lanes(50, 50000, 512), 512);
  // kBceBlockPerRowMinWidth = 1024, kBceWarpPerRowMinWidth = 256.
  EXPECT_EQ(lanes(50, 1024), 256);
  EXPECT_EQ(lanes(50, 1023), 32);
  EXPECT_EQ(lanes(50, 256), 32);
  EXPECT_EQ(lanes(50, 255), 4);
  // A block a row only for fewer rows than the GPU has warps (8448).
  EXPECT_EQ(lanes(8447, 5000), 256);
  EXPECT_EQ(lanes(8448, 5000), 32);
  // Past rows x 4 = the resident threads (67584 rows), 4 lanes: the block fills the GPU alone.
  EXPECT_EQ(lanes(67583, 300), 32);
  EXPECT_EQ(lanes(67584, 300), 4);
  EXPECT_EQ(lanes(67584, 50000), 4);
  // No device figure (0): never past 4 lanes; the paper variant: always 1.
  EXPECT_EQ(bce_lanes_per_row(BceVariant::hopper, {50, 50000}, 256, 0), 4);
  EXPECT_EQ(bce_lanes_per_row(BceVariant::paper, {50, 50000}, 256, h100), 1);
  // The tiles: 50 rows of 5000 at a block a row are 50 tiles; 40 rows of 300 at a warp a row
  // 5 tiles of 8 rows (256 threads); 1000 rows of 3 at 1 lane 4 tiles; 10 empty rows 1 tile.
  const std::vector<BceBlockShape> shapes{{1000, 3}, {40, 300}, {50, 5000}, {10, 0}};
  const BceTiles tiles = make_bce_tiles(shapes, BceVariant::hopper, 256, h100);
  EXPECT_THAT(tiles.block_lanes, ElementsAre(1, 32, 256, 1));
  EXPECT_EQ(tiles.size(), 4 + 5 + 50 + 1);
  EXPECT_EQ(bce_tile_count(shapes, BceVariant::hopper, 256, h100), 60);
  EXPECT_EQ(tiles.tile_first_row[4 + 5], 1040);   // the first block-wide row
  EXPECT_EQ(tiles.tile_first_row[4 + 5 + 1], 1041);
  EXPECT_EQ(tiles.tile_first_row[4 + 1], 1008);   // the second warp-a-row tile
}

TEST(CudaBceLayout, HostReplayOfWarpAndBlockPerRowTilesEqualsCsrOnAFewVeryLongRows) {
  const std::uint64_t seed = testing::test_seed();
  std::cout << "seed " << seed << " (SPMVD_TEST_SEED)\n";
  std::mt19937_64 rng(seed);
  const CudaBceRules rules;
  // 20000 rows of 2-6 and 6 rows of ~3000 and 6 of ~750 (of 4000 columns); 3000 rows of 2-6
  // and 3 rows of ~400 and 3 of ~100.
  for (const auto& [short_rows, long_rows, long_length] :
       {std::tuple{20000, 6, 3000}, std::tuple{3000, 3, 400}}) {
    const CsrMatrix<double> m = few_long_rows_matrix(rng, short_rows, long_rows, long_length, 4000);
    const MatrixFeatures f = df_features(m);
    const std::vector<std::vector<std::int64_t>> partitions{
        {}, every_other_length(f),
        CudaBceRules::params_of(rules.candidates(f, testing::h100()).front()).boundaries};
    bool warp_rows = false, block_rows = false;
    for (const auto& boundaries : partitions) {
      for (const std::uint32_t block : {32u, 128u, 256u, 512u}) {
        const std::string what = "few long rows " + std::to_string(long_length);
        const std::vector<std::int32_t> used =
            expect_matches_csr<double>(m, boundaries, BceVariant::hopper, block, what);
        expect_matches_csr<float>(m, boundaries, BceVariant::hopper, block, what + " fp32");
        for (const std::int32_t l : used) {
          warp_rows |= l == 32 && block > 32;
          block_rows |= l == static_cast<std::int32_t>(block) && block > 32;
        }
      }
      // The paper variant and a device without the figure over the same layouts.
      expect_matches_csr<double>(m, boundaries, BceVariant::paper, 256, "few long rows paper");
      expect_matches_csr<double>(m, boundaries, BceVariant::hopper, 256, "no figure", 0);
    }
    // The new tiles were exercised, not only the 1-4 lane ones.
    EXPECT_TRUE(warp_rows);
    if (long_length >= kBceBlockPerRowMinWidth) {
      EXPECT_TRUE(block_rows);
    }
  }
}

TEST(CudaBceLayout, RejectsBoundariesThatAreNoRowLength) {
  const CsrMatrix<double> m = paper_000_matrix();
  EXPECT_THAT(error_of([&] { make_bce_layout<double>(m, std::vector<std::int64_t>{5}); }),
              HasSubstr("boundary M_1 = 5 is the length of no row"));
  EXPECT_THAT(error_of([&] { make_bce_layout<double>(m, std::vector<std::int64_t>{4, 2}); }),
              HasSubstr("boundary M_2 = 2 must be positive and above the one before"));
  EXPECT_THAT(error_of([&] { make_bce_layout<double>(m, std::vector<std::int64_t>{7}); }),
              HasSubstr("boundary M_1 = 7 must be below the longest row, 7"));
}

TEST(CudaBceRules, PartsAreTheBlocksAsCudaEll) {
  const CudaBceRules rules;
  const MatrixFeatures f = df_features(paper_000_matrix());
  const Candidate c{.format = kCudaBceFormatId,
                    .params = FieldSet::of(CudaBceParams{.boundaries = {2, 4}, .variant = 0}),
                    .launch = {.block_size = 128, .threads_per_row = 1, .grid_size = 3}};
  const std::vector<FormatPart> parts = rules.parts(f, c);
  ASSERT_EQ(parts.size(), 3u);
  const std::int64_t widths[] = {2, 4, 7}, rows[] = {5, 3, 2}, nnz[] = {8, 10, 13};
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(parts[i].runs, FormatPart::Runs::gpu);
    EXPECT_EQ(parts[i].candidate.format, kCudaEllFormatId);
    EXPECT_EQ(CudaEllRules::params_of(parts[i].candidate).ell_width, widths[i]);
    EXPECT_EQ(parts[i].candidate.launch.block_size, 128u);
    EXPECT_EQ(parts[i].features.rows, rows[i]);
    EXPECT_EQ(parts[i].features.nnz, nnz[i]);
    EXPECT_EQ(parts[i].features.cols, 10);
  }
}

TEST(CudaBceRules, HopperPartsAreTheWideBlocksAsTheWarpsThatRunThem) {
  // circuit-3M's shape: 100000 rows of 3, 10 of 300, 50 of 50000.
  MatrixFeatures whole;
  whole.cols = 3000000;
  const MatrixFeatures f = part_features(whole, {{3, 100000}, {300, 10}, {50000, 50}});
  const CudaBceRules rules;
  const Candidate c{.format = kCudaBceFormatId,
                    .params = FieldSet::of(CudaBceParams{.boundaries = {3, 300},
                                                         .variant = 1,
                                                         .resident_threads = kH100ResidentThreads}),
                    .launch = {.block_size = 256, .threads_per_row = 1, .grid_size = 1}};
  const std::vector<FormatPart> parts = rules.parts(f, c);
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[0].candidate.format, kCudaEllFormatId);
  EXPECT_EQ(CudaEllRules::params_of(parts[0].candidate).ell_width, 3u);
  EXPECT_EQ(parts[0].features.rows, 100000);
  // A warp a row: cuda_csr_vector, 32 lanes, the block's own rows.
  EXPECT_EQ(parts[1].candidate.format, kCudaCsrVectorFormatId);
  EXPECT_EQ(parts[1].candidate.launch.threads_per_row, 32u);
  EXPECT_EQ(parts[1].candidate.launch.grid_size, 2u);  // 10 rows x 32 lanes / 256
  EXPECT_EQ(parts[1].features.rows, 10);
  EXPECT_EQ(parts[1].features.row_length_max, 300);
  // A block a row: 8 warps a row, so 400 warp-rows of 6250, the chain each lane walks 196.
  EXPECT_EQ(parts[2].candidate.format, kCudaCsrVectorFormatId);
  EXPECT_EQ(parts[2].candidate.launch.threads_per_row, 32u);
  EXPECT_EQ(parts[2].features.rows, 400);
  EXPECT_EQ(parts[2].features.row_length_max, 6250);
  EXPECT_EQ(parts[2].features.nnz, 50 * 50000);
  // The paper variant runs every block a thread a row: all cuda_ell.
  Candidate paper = c;
  paper.params = FieldSet::of(CudaBceParams{
      .boundaries = {3, 300}, .variant = 0, .resident_threads = kH100ResidentThreads});
  for (const FormatPart& part : rules.parts(f, paper))
    EXPECT_EQ(part.candidate.format, kCudaEllFormatId);
}

TEST(CudaBceRules, PredictedOpaIsNeverAboveOneBlockOrOneBlockPerRowVectorSet) {
  const std::uint64_t seed = testing::test_seed();
  std::cout << "seed " << seed << "\n";
  std::mt19937_64 rng(seed);
  const CudaBceRules rules;
  const HandWrittenPredictor predictor;
  for (const std::int64_t max_length : {60, 400, 3000}) {  // M' below and above 128 groups
    const MatrixFeatures f = df_features(skewed_matrix(rng, 20000, 4000, max_length));
    const std::vector<Candidate> chosen = rules.candidates_chosen_by(predictor, f, testing::h100());
    ASSERT_EQ(chosen.size(), 6u);
    const std::vector<std::int64_t> boundaries = CudaBceRules::params_of(chosen.front()).boundaries;
    const double opa = predicted_ms(rules, f, boundaries, predictor);
    const double one_block = predicted_ms(rules, f, {}, predictor);
    std::vector<std::int64_t> every_set;
    for (std::size_t i = 0; i + 1 < f.distribution.size(); ++i)
      every_set.push_back(f.distribution[i].length);
    const double per_set = predicted_ms(rules, f, every_set, predictor);
    std::cout << "M' = " << f.distribution.size() << ": k = " << boundaries.size() + 1
              << ", OPA " << opa << " ms, one block " << one_block << " ms, one per set "
              << per_set << " ms\n";
    EXPECT_LE(opa, one_block * (1 + 1e-12));
    // Exact below kBceMaxPredictedGroups sets; over groups above, where per-set is no candidate.
    if (static_cast<std::int64_t>(f.distribution.size()) <= kBceMaxPredictedGroups) {
      EXPECT_LE(opa, per_set * (1 + 1e-12));
    }
    for (const Candidate& c : chosen) EXPECT_TRUE(rules.is_valid(c, f, testing::h100()));
  }
}

TEST(CudaBceRules, WithoutPredictionsTheModelFreeCandidatesStand) {
  const CudaBceRules rules;
  const MatrixFeatures f = df_features(paper_000_matrix());
  EXPECT_EQ(rules.candidates_chosen_by(NoPredictor{}, f, testing::h100()),
            rules.candidates(f, testing::h100()));
}

TEST(CudaBceRules, ModelFreeCandidatesAreOpaWithTheResidentThreadsOfAnSmAsL) {
  const CudaBceRules rules;
  // L = 2048 on the H100. 300000 rows of length 2 and 300000 of length 40: splitting saves
  // 300000 * 38 padded slots. The 100 rows of length 41 cost 41 * L = 83968 alone, less than
  // the 300000 slots that widening the 40s to 41 would add, so they get their own block.
  MatrixFeatures whole;
  whole.cols = 100000;
  const MatrixFeatures f = part_features(whole, {{2, 300000}, {40, 300000}, {41, 100}});
  const std::vector<Candidate> cs = rules.candidates(f, testing::h100());
  ASSERT_EQ(cs.size(), 6u);
  for (const Candidate& c : cs) {
    EXPECT_THAT(CudaBceRules::params_of(c).boundaries, ElementsAre(2, 40));
    EXPECT_TRUE(rules.is_valid(c, f, testing::h100()));
    EXPECT_GE(rules.device_bytes(f, Precision::fp64, c),
              (300000u * 2 + 300000u * 40 + 100u * 41) * 12u);
  }
  EXPECT_TRUE(rules.admissible(f, testing::h100(), Precision::fp64, std::uint64_t{1} << 30));
  EXPECT_FALSE(rules.admissible(f, testing::h100(), Precision::fp64, 1u << 20));
  EXPECT_FALSE(rules.admissible(f, testing::eight_core_cpu(), Precision::fp64, 1u << 30));
}

TEST(CudaBceRules, ModelFreeCandidatesSplitOffALongRow) {
  // 100000 rows of 3 and one of 5000. One ELL block: 5000 * 100001 = 5e8 slots (6 GB in fp64).
  // Apart: 3 * 100000 + 5000 * L = 10.5M with L = 2048, so OPA splits. (With L = the whole
  // GPU's 270336 threads, both blocks would be priced at W * L and one block would win.)
  MatrixFeatures whole;
  whole.cols = 10000;
  const MatrixFeatures f = part_features(whole, {{3, 100000}, {5000, 1}});
  const CudaBceRules rules;
  const std::vector<Candidate> cs = rules.candidates(f, testing::h100());
  ASSERT_FALSE(cs.empty());
  for (const Candidate& c : cs) EXPECT_THAT(CudaBceRules::params_of(c).boundaries, ElementsAre(3));
}

TEST(CudaBceRules, StoredPlanRevalidatesStructurallyAndBadParamsAreRejectedPrecisely) {
  const CudaBceRules rules;
  const MatrixFeatures f = df_features(paper_000_matrix());
  const DeviceInfo h100 = testing::h100();
  // (2, 4) is not what the model-free rule picks here, yet a stored plan with it is valid.
  Candidate c{.format = kCudaBceFormatId,
              .params = FieldSet::of(CudaBceParams{.boundaries = {2, 4}, .variant = 1}),
              .launch = {.block_size = 256, .threads_per_row = 1, .grid_size = 3}};
  EXPECT_TRUE(rules.is_valid(c, f, h100));
  EXPECT_EQ(CudaBceRules::params_of(c), (CudaBceParams{.boundaries = {2, 4}, .variant = 1}));
  // Through the plan cache's JSON and back: the same candidate, still valid.
  Plan stored;
  stored.format = c.format;
  stored.format_name = "cuda_bce";
  stored.params = c.params;
  stored.launch = c.launch;
  const Plan read = plan_from_json(plan_to_json(stored));
  const Candidate reread{.format = read.format, .params = read.params, .launch = read.launch};
  EXPECT_EQ(reread, c);
  EXPECT_TRUE(rules.is_valid(reread, f, h100));

  Candidate bad = c;
  bad.params = FieldSet::of(CudaBceParams{.boundaries = {2, 5}, .variant = 1});
  EXPECT_FALSE(rules.is_valid(bad, f, h100));
  EXPECT_THAT(error_of([&] { CudaBceRules::check_candidate(bad, f); }),
              HasSubstr("boundary M_2 = 5 is the length of no row"));
  bad.params = FieldSet::of(CudaBceParams{.boundaries = {2, 4}, .variant = 7});
  EXPECT_FALSE(rules.is_valid(bad, f, h100));
  EXPECT_THAT(error_of([&] { CudaBceRules::check_candidate(bad, f); }),
              HasSubstr("variant 7 is neither 0 (paper) nor 1 (hopper)"));
  bad = c;
  bad.launch.grid_size = 4;
  EXPECT_THAT(error_of([&] { CudaBceRules::check_candidate(bad, f); }),
              HasSubstr("grid_size 4 differs from the 3 tiles"));
  bad = c;
  bad.params = FieldSet::of(
      CudaBceParams{.boundaries = {2, 4}, .variant = 1, .resident_threads = -1});
  EXPECT_FALSE(rules.is_valid(bad, f, h100));
  EXPECT_THAT(error_of([&] { CudaBceRules::check_candidate(bad, f); }),
              HasSubstr("resident_threads -1 is negative"));
  bad = c;
  bad.launch.block_size = 100;
  EXPECT_THAT(error_of([&] { CudaBceRules::check_candidate(bad, f); }),
              HasSubstr("block_size 100"));
  bad = c;
  bad.params = FieldSet::of(CudaEllParams{.ell_width = 7});
  EXPECT_FALSE(rules.is_valid(bad, f, h100));
  EXPECT_THAT(error_of([&] { CudaBceRules::check_candidate(bad, f); }), HasSubstr("cuda_bce"));
}

}  // namespace
}  // namespace spmvd
