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
#include <set>
#include <span>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/part_features.hpp"
#include "core/plan.hpp"
#include "kernels/formats/common/sell_layout.hpp"
#include "kernels/formats/cuda_bce/bce_layout.hpp"
#include "kernels/formats/cuda_bce/bce_row_runs.hpp"
#include "kernels/formats/cuda_bce/bce_tile_runs.hpp"
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
// Resident threads for bce_tile_runs: a GPU that holds every tiling at once, and one that holds
// a single tile of 32 threads (every tiling of more tiles is beyond one wave).
constexpr std::int64_t kEveryTilingInOneWave = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t kOneTilesThreads = 32;

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

// The partitions the replay tests walk: one block, a block for every 2nd length, and OPA's
// (the model-free candidates' on an H100).
std::vector<std::vector<std::int64_t>> partitions_to_test(const MatrixFeatures& f) {
  return {{},
          every_other_length(f),
          CudaBceRules::params_of(CudaBceRules().candidates(f, testing::h100()).front()).boundaries};
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
  // The builder's order: shapes (from the DF) -> tiles -> the layout interleaved for their lanes.
  const BceTiles tiles = make_bce_tiles(bce_block_shapes(df_features(m), boundaries), variant,
                                        block_size, resident_threads);
  const BceLayout<Value> bce = make_bce_layout<Value>(m, boundaries, tiles.block_lanes);
  EXPECT_EQ(bce.shapes_with_empty_rows(), bce_block_shapes(df_features(m), boundaries));
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
  EXPECT_TRUE(bce.lengths_in_bytes());  // rows of at most 7: in a byte each
  EXPECT_TRUE(std::ranges::equal(bce.row_length_bytes, bce.row_lengths));
  // The DF view of the same partition.
  EXPECT_THAT(bce_block_shapes(df_features(m), boundaries),
              ElementsAre(BceBlockShape{5, 2}, BceBlockShape{3, 4}, BceBlockShape{2, 7},
                          BceBlockShape{0, 0}));
}

TEST(CudaBceLayout, PaperWorkedExampleKeepsItsColumnMajorBlocksInTheHopperVariant) {
  // Widths 2, 4 and 7 are below 16: one lane a row (L = 1), and L = 1 is column-major, so the
  // hopper variant's layout of the worked example is the paper's, slot for slot.
  const CsrMatrix<double> m = paper_000_matrix();
  const std::vector<std::int64_t> boundaries{2, 4};
  const BceTiles tiles = make_bce_tiles(bce_block_shapes(df_features(m), boundaries),
                                        BceVariant::hopper, 256, kH100ResidentThreads);
  EXPECT_THAT(tiles.block_lanes, ElementsAre(1, 1, 1, 1));
  const BceLayout<double> paper = make_bce_layout<double>(m, boundaries);
  const BceLayout<double> hopper = make_bce_layout<double>(m, boundaries, tiles.block_lanes);
  EXPECT_THAT(paper.block_lanes, ElementsAre(1, 1, 1));
  EXPECT_EQ(hopper.block_slot_offsets, paper.block_slot_offsets);
  EXPECT_EQ(hopper.offsets, paper.offsets);
  EXPECT_EQ(hopper.values, paper.values);
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
  // Skewed matrices with empty rows, wide blocks (lanes 2 and 4) and blocks over several tiles.
  for (const auto& [rows, cols, max_length] :
       {std::tuple{700, 300, 120}, std::tuple{3000, 5000, 2000}, std::tuple{64, 40, 40}}) {
    const CsrMatrix<double> m = skewed_matrix(rng, rows, cols, max_length);
    const MatrixFeatures f = df_features(m);
    for (const auto& boundaries : partitions_to_test(f)) {
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
    // OPA's 6, and the one-block partition's 3 hopper candidates where OPA split the rows and
    // their padding is within cuda_ell's bound.
    const bool split = !CudaBceRules::params_of(all.front()).boundaries.empty();
    const bool one_block_fits =
        features.rows * features.row_length_max <= kEllMaxPaddingRatio * features.nnz;
    ASSERT_EQ(all.size(), split && one_block_fits ? 9u : 6u);
    for (const Candidate& c : all) {
      EXPECT_TRUE(rules.is_valid(c, features, testing::h100()));
      EXPECT_NO_THROW(CudaBceRules::check_candidate(c, df_features(named.matrix)));
      const CudaBceParams params = CudaBceRules::params_of(c);
      const auto variant = static_cast<BceVariant>(params.variant);
      EXPECT_EQ(params.resident_threads, kH100ResidentThreads);
      const BceTiles tiles =
          make_bce_tiles(bce_block_shapes(df_features(named.matrix), params.boundaries), variant,
                         c.launch.block_size, params.resident_threads);
      const BceLayout<double> bce =
          make_bce_layout<double>(named.matrix, params.boundaries, tiles.block_lanes);
      EXPECT_EQ(std::max<std::int64_t>(tiles.size(), 1), c.launch.grid_size);
      const std::uint64_t k = static_cast<std::uint64_t>(bce.blocks());
      const bool hopper = variant == BceVariant::hopper;
      const auto split = static_cast<std::uint64_t>(tiles.partials * 8 + tiles.counters * 4);
      // What CudaBceOperator uploads: Ap and N (k + 2 int64), rowNo, the slots; paper: 2 int32
      // a tile and Aw and blockPos (int64 a block and the empty rows' block); hopper: a 64-byte
      // descriptor a tile, the row lengths (a byte or 4 each), and where split rows exist 2
      // int64 a block and their piece sums and counts.
      const std::uint64_t lengths = bce.lengths_in_bytes() ? bce.row_length_bytes.size()
                                                           : bce.row_lengths.size() * 4;
      const auto per_tile = [&](std::uint64_t n) {
        return hopper ? n * 64 + lengths + (tiles.counters > 0 ? (k + 1) * 16 : 0)
                      : n * 8 + (k + 1) * 16;
      };
      const std::uint64_t common = (k + 2) * 8 + bce.row_no.size() * 4 + bce.offsets.size() * 4 +
                                   bce.values.size() * 8 + split;
      const std::uint64_t device_bytes = rules.device_bytes(features, Precision::fp64, c);
      EXPECT_LE(common + per_tile(static_cast<std::uint64_t>(tiles.size())), device_bytes);
      // Exactly that at the launch's grid_size (one tile more where the matrix has none).
      EXPECT_EQ(device_bytes, common + per_tile(c.launch.grid_size));
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
  EXPECT_EQ(lanes(270335, 20), 2);
  // As many rows as resident threads: a row a thread fills the GPU, one lane a row.
  EXPECT_EQ(lanes(270336, 20), 1);
  EXPECT_EQ(lanes(270336, 300), 1);
  EXPECT_EQ(lanes(5000000, 27), 1);
  // No device figure (0): never past 4 lanes; the paper variant: always 1.
  EXPECT_EQ(bce_lanes_per_row(BceVariant::hopper, {50, 50000}, 256, 0), 4);
  EXPECT_EQ(bce_lanes_per_row(BceVariant::paper, {50, 50000}, 256, h100), 1);
  // The tiles: 50 rows of 5000 at a block a row are 50 tiles; 40 rows of 300 at a warp a row
  // 5 tiles of 8 rows (256 threads); 1000 rows of 3 at 1 lane 4 tiles; 10 empty rows 1 tile.
  // Longest chain first: the block-wide rows (4000 / 256 -> 16 gathers a lane, one piece), the
  // warp-wide ones (300 / 32 -> 10), the rows of 3, the empty rows.
  const std::vector<BceBlockShape> shapes{{1000, 3}, {40, 300}, {50, 4000}, {10, 0}};
  const BceTiles tiles = make_bce_tiles(shapes, BceVariant::hopper, 256, h100);
  EXPECT_THAT(tiles.block_lanes, ElementsAre(1, 32, 256, 1));
  EXPECT_EQ(tiles.size(), 50 + 5 + 4 + 1);
  EXPECT_EQ(bce_tile_count(shapes, BceVariant::hopper, 256, h100), 60);
  EXPECT_EQ(tiles.tile_block[0], 2);
  EXPECT_EQ(tiles.tile_first_row[0], 1040);  // the first block-wide row
  EXPECT_EQ(tiles.tile_end_row[0], 1041);
  EXPECT_EQ(tiles.tile_first_row[1], 1041);
  EXPECT_EQ(tiles.tile_block[50], 1);
  EXPECT_EQ(tiles.tile_first_row[50 + 1], 1008);  // the second warp-a-row tile
  EXPECT_EQ(tiles.tile_end_row[50 + 4], 1040);    // the last, 8 rows cut to the block's 40
  EXPECT_EQ(tiles.tile_block[55], 0);
  EXPECT_EQ(tiles.tile_first_row[55], 0);
  EXPECT_EQ(tiles.tile_end_row[58], 1000);
  EXPECT_EQ(tiles.tile_block[59], 3);
  EXPECT_EQ(tiles.tile_first_row[59], 1090);
  EXPECT_EQ(tiles.tile_end_row[59], 1100);
  // The paper variant keeps Algorithm 4's block order.
  const BceTiles paper = make_bce_tiles(shapes, BceVariant::paper, 256, h100);
  EXPECT_TRUE(std::is_sorted(paper.tile_first_row.begin(), paper.tile_first_row.end()));
  EXPECT_TRUE(std::is_sorted(paper.tile_block.begin(), paper.tile_block.end()));
}

TEST(CudaBceLayout, HostReplayOfWarpAndBlockPerRowTilesEqualsCsrOnAFewVeryLongRows) {
  const std::uint64_t seed = testing::test_seed();
  std::cout << "seed " << seed << " (SPMVD_TEST_SEED)\n";
  std::mt19937_64 rng(seed);
  // 20000 rows of 2-6 and 6 rows of ~3000 and 6 of ~750 (of 4000 columns); 3000 rows of 2-6
  // and 3 rows of ~400 and 3 of ~100.
  for (const auto& [short_rows, long_rows, long_length] :
       {std::tuple{20000, 6, 3000}, std::tuple{3000, 3, 400}}) {
    const CsrMatrix<double> m = few_long_rows_matrix(rng, short_rows, long_rows, long_length, 4000);
    const MatrixFeatures f = df_features(m);
    bool warp_rows = false, block_rows = false;
    for (const auto& boundaries : partitions_to_test(f)) {
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

// Block-wide rows longer than block_size x kBceSlotsPerLanePerPiece are cut into pieces, one
// CUDA block each, whose sums the last to arrive adds: the replay still equals CSR.
TEST(CudaBceLayout, HostReplayOfRowsSplitIntoPiecesEqualsCsr) {
  const std::int64_t h100 = kH100ResidentThreads;
  // 40000 slots: 8192 a piece at block size 128 (5 pieces), 32768 at 512 (2); never for fewer
  // lanes than the block, nor on paper.
  EXPECT_EQ(bce_row_pieces(BceVariant::hopper, {4, 40000}, 128, 128), 5);
  EXPECT_EQ(bce_row_pieces(BceVariant::hopper, {4, 40000}, 512, 512), 2);
  EXPECT_EQ(bce_row_pieces(BceVariant::hopper, {4, 32768}, 512, 512), 1);
  EXPECT_EQ(bce_row_pieces(BceVariant::hopper, {4, 40000}, 32, 128), 1);
  EXPECT_EQ(bce_row_pieces(BceVariant::paper, {4, 40000}, 1, 128), 1);
  // The tiles: every piece of every row, the pieces' sums and counts laid out per block.
  const std::vector<BceBlockShape> shapes{{1000, 3}, {4, 40000}, {2, 0}};
  const BceTiles tiles = make_bce_tiles(shapes, BceVariant::hopper, 128, h100);
  EXPECT_THAT(tiles.block_pieces, ElementsAre(1, 5, 1));
  EXPECT_EQ(tiles.partials, 20);
  EXPECT_EQ(tiles.counters, 4);
  EXPECT_EQ(tiles.size(), 4 * 5 + 8 + 1);
  EXPECT_EQ(bce_tile_count(shapes, BceVariant::hopper, 128, h100), tiles.size());
  EXPECT_THAT(std::vector<std::int32_t>(tiles.tile_piece.begin(), tiles.tile_piece.begin() + 6),
              ElementsAre(0, 1, 2, 3, 4, 0));
  EXPECT_EQ(tiles.tile_first_row[5], 1001);  // the second long row's first piece

  const std::uint64_t seed = testing::test_seed();
  std::cout << "seed " << seed << " (SPMVD_TEST_SEED)\n";
  std::mt19937_64 rng(seed);
  // 3000 rows of 2-6 and 4 of ~20000 (of 24000 columns) and 4 of ~5000: 3 pieces at block
  // size 128, 2 at 256.
  const CsrMatrix<double> m = few_long_rows_matrix(rng, 3000, 4, 20000, 24000);
  const MatrixFeatures f = df_features(m);
  bool split = false;
  for (const auto& boundaries : {std::vector<std::int64_t>{}, every_other_length(f)}) {
    for (const std::uint32_t block : {128u, 256u, 512u}) {
      const BceTiles t = make_bce_tiles(bce_block_shapes(f, boundaries), BceVariant::hopper,
                                        block, h100);
      split |= std::ranges::any_of(t.block_pieces, [](std::int32_t p) { return p > 1; });
      expect_matches_csr<double>(m, boundaries, BceVariant::hopper, block, "split rows");
      expect_matches_csr<float>(m, boundaries, BceVariant::hopper, block, "split rows fp32");
    }
  }
  EXPECT_TRUE(split);
}

// Rows of the given lengths (each length `count` times, and `empty` empty rows, shuffled),
// columns sampled without repetition from `cols`, values uniform in [-1, 1).
CsrMatrix<double> rows_of_lengths(std::mt19937_64& rng,
                                  const std::vector<std::pair<std::int64_t, std::int64_t>>& lengths,
                                  std::int64_t empty, std::int64_t cols) {
  CsrMatrix<double> m{0, cols, {0}, {}, {}};
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::vector<ColIndex> all(static_cast<std::size_t>(cols));
  std::iota(all.begin(), all.end(), ColIndex{0});
  std::vector<std::int64_t> row_lengths;
  for (const auto& [length, count] : lengths) row_lengths.insert(row_lengths.end(), count, length);
  row_lengths.insert(row_lengths.end(), empty, 0);
  std::shuffle(row_lengths.begin(), row_lengths.end(), rng);
  for (const std::int64_t length : row_lengths) {
    std::vector<ColIndex> columns;
    std::sample(all.begin(), all.end(), std::back_inserter(columns), length, rng);
    std::shuffle(columns.begin(), columns.end(), rng);  // slot j is the row's j-th entry
    for (const ColIndex c : columns) {
      m.col_indices.push_back(c);
      m.values.push_back(2.0 * unit(rng) - 1.0);
    }
    m.row_offsets.push_back(static_cast<RowOffset>(m.col_indices.size()));
    ++m.rows;
  }
  return m;
}

// A matrix whose rows have the given lengths (columns 0.. of each row).
CsrMatrix<double> rows_of_lengths(const std::vector<std::int64_t>& lengths, std::int64_t cols) {
  CsrMatrix<double> m{static_cast<std::int64_t>(lengths.size()), cols, {0}, {}, {}};
  for (const std::int64_t length : lengths) {
    for (std::int64_t c = 0; c < length; ++c) {
      m.col_indices.push_back(static_cast<ColIndex>(c));
      m.values.push_back(1.0);
    }
    m.row_offsets.push_back(static_cast<RowOffset>(m.col_indices.size()));
  }
  return m;
}

// Blocks of widths 1, 19, 37, 300 and 2000 (rows of 1; 17 and 19; 25 and 37; 290 and 300;
// 1500 and 2000), 9 empty rows, 3000 columns; with resident_threads 160 and block sizes of at
// least 128 their lanes are 1, 2, 4, 32 and the whole CUDA block:
//  - 19: 2 from width 16; 37: 4 from width 32, and its 40 rows x 4 = 160 fill "the GPU";
//  - 300: 8 rows x 4 < 160, width >= 256: a warp a row;
//  - 2000: 3 rows x 4 < 160, width >= 1024, 3 rows < 160 / 32 warps: a block a row.
constexpr std::int64_t kSmallResidentThreads = 160;
const std::vector<std::int64_t> kLaneShapesBoundaries{1, 19, 37, 300};
CsrMatrix<double> lane_shapes_matrix(std::mt19937_64& rng) {
  return rows_of_lengths(
      rng,
      {{1, 50}, {17, 6}, {19, 5}, {25, 20}, {37, 20}, {290, 3}, {300, 5}, {1500, 1}, {2000, 2}}, 9,
      3000);
}

TEST(CudaBceLayout, HopperLayoutPlacesSlotJOfRowRInLaneInterleavedGroups) {
  std::mt19937_64 rng(testing::test_seed());
  const CsrMatrix<double> m = lane_shapes_matrix(rng);
  for (const std::uint32_t block_size : {128u, 256u, 512u}) {
    SCOPED_TRACE("block size " + std::to_string(block_size));
    const BceTiles tiles = make_bce_tiles(bce_block_shapes(df_features(m), kLaneShapesBoundaries),
                                          BceVariant::hopper, block_size, kSmallResidentThreads);
    const auto block_wide = static_cast<std::int32_t>(block_size);
    ASSERT_THAT(tiles.block_lanes, ElementsAre(1, 2, 4, 32, block_wide, 1));
    const BceLayout<double> bce =
        make_bce_layout<double>(m, kLaneShapesBoundaries, tiles.block_lanes);
    EXPECT_THAT(bce.block_lanes, ElementsAre(1, 2, 4, 32, block_wide));
    EXPECT_THAT(bce.block_widths, ElementsAre(1, 19, 37, 300, 2000));
    EXPECT_THAT(bce.block_row_offsets, ElementsAre(0, 50, 61, 101, 109, 112));
    // blockPos over the widths padded to the lanes: 50 x 1, 11 x 20, 40 x 40, 8 x 320, and
    // 3 x 2048 (block size 128, 256 or 512 divides 2048).
    EXPECT_THAT(bce.block_slot_offsets,
                ElementsAre(0, 50, 50 + 220, 50 + 220 + 1600, 50 + 220 + 1600 + 2560,
                            50 + 220 + 1600 + 2560 + 6144));
    EXPECT_EQ(bce.offsets.size(), 50u + 220 + 1600 + 2560 + 6144);
    // Every entry where the formula puts it; every other slot padding.
    std::vector<bool> filled(bce.offsets.size(), false);
    for (std::int64_t i = 0; i < bce.blocks(); ++i) {
      const std::int64_t first = bce.block_row_offsets[i];
      const std::int64_t n = bce.block_row_offsets[i + 1] - first;
      const std::int64_t lanes = bce.block_lanes[i];
      for (std::int64_t r = 0; r < n; ++r) {
        const std::int64_t row = bce.row_no[first + r];
        for (std::int64_t j = 0; j < m.row_length(row); ++j) {
          const std::int64_t slot =
              bce.block_slot_offsets[i] + (j / lanes) * (n * lanes) + r * lanes + j % lanes;
          EXPECT_EQ(bce.offsets[slot], m.col_indices[m.row_offsets[row] + j])
              << "block " << i << " row " << r << " slot " << j;
          EXPECT_EQ(bce.values[slot], m.values[m.row_offsets[row] + j]);
          filled[slot] = true;
        }
      }
    }
    for (std::size_t slot = 0; slot < filled.size(); ++slot) {
      if (filled[slot]) continue;
      EXPECT_EQ(bce.offsets[slot], kPaddingColumn) << "slot " << slot;
      EXPECT_EQ(bce.values[slot], 0.0) << "slot " << slot;
    }
    EXPECT_EQ(std::count(filled.begin(), filled.end(), true), m.nnz());
    // A warp reads 32 consecutive slots at each step: in the 4-lane block the first warp's
    // lanes (8 rows x 4) start at blockPos + 0 .. 31, the 32-lane block's first row likewise.
    const std::int64_t four = bce.block_slot_offsets[2];
    EXPECT_EQ(bce.offsets[four + 5 * 4 + 2], m.col_indices[m.row_offsets[bce.row_no[61 + 5]] + 2]);
    const std::int64_t warp = bce.block_slot_offsets[3];
    EXPECT_EQ(bce.offsets[warp + 31], m.col_indices[m.row_offsets[bce.row_no[101]] + 31]);
    // ... and at its second step row 0's slots 32..63 follow the block's 8 rows of 32.
    EXPECT_EQ(bce.offsets[warp + 8 * 32], m.col_indices[m.row_offsets[bce.row_no[101]] + 32]);
  }
}

TEST(CudaBceLayout, HostReplayOverTheInterleavedLayoutEqualsCsrForEveryLanes) {
  const std::uint64_t seed = testing::test_seed();
  std::cout << "seed " << seed << " (SPMVD_TEST_SEED)\n";
  std::mt19937_64 rng(seed);
  for (int repeat = 0; repeat < 3; ++repeat) {
    const CsrMatrix<double> m = lane_shapes_matrix(rng);
    for (const std::uint32_t block_size : {128u, 256u, 512u}) {
      const std::vector<std::int32_t> lanes =
          expect_matches_csr<double>(m, kLaneShapesBoundaries, BceVariant::hopper, block_size,
                                     "lane shapes", kSmallResidentThreads);
      EXPECT_THAT(lanes, ElementsAre(1, 2, 4, 32, static_cast<std::int32_t>(block_size), 1));
      expect_matches_csr<float>(m, kLaneShapesBoundaries, BceVariant::hopper, block_size,
                                "lane shapes fp32", kSmallResidentThreads);
      // One block of width 2000 (112 rows x 4 >= 160: 4 lanes) and the paper variant over the
      // same matrix.
      expect_matches_csr<double>(m, {}, BceVariant::hopper, block_size, "one block",
                                 kSmallResidentThreads);
      expect_matches_csr<double>(m, kLaneShapesBoundaries, BceVariant::paper, block_size,
                                 "lane shapes paper", kSmallResidentThreads);
    }
  }
}

TEST(CudaBceLayout, ReplayRejectsALayoutNotInterleavedForTheTilesLanes) {
  std::mt19937_64 rng(testing::test_seed());
  const CsrMatrix<double> m = lane_shapes_matrix(rng);
  const BceTiles tiles = make_bce_tiles(bce_block_shapes(df_features(m), kLaneShapesBoundaries),
                                        BceVariant::hopper, 256, kSmallResidentThreads);
  const BceLayout<double> column_major = make_bce_layout<double>(m, kLaneShapesBoundaries);
  std::vector<double> x(static_cast<std::size_t>(m.cols), 1.0), y(static_cast<std::size_t>(m.rows));
  EXPECT_THAT(error_of([&] {
                bce_reference_multiply<double>(column_major, tiles, BceVariant::hopper, 256,
                                               x.data(), y.data(), 1.0, 0.0);
              }),
              HasSubstr("not interleaved for the tiles' lanes"));
  EXPECT_THAT(error_of([&] {
                make_bce_layout<double>(m, kLaneShapesBoundaries,
                                        std::vector<std::int32_t>{1, 2, 4, 32, 256});
              }),
              HasSubstr("5 lanes per block for 5 blocks and the empty rows (need 6)"));
  EXPECT_THAT(error_of([&] {
                make_bce_layout<double>(m, kLaneShapesBoundaries,
                                        std::vector<std::int32_t>{1, 2, 3, 32, 256, 1});
              }),
              HasSubstr("lanes 3 of block 3 is not a power of two"));
}

TEST(CudaBceLayout, TilesOfConsecutiveCallerRowsCarryTheirFirstRow) {
  // Rows of lengths 1, 5, 5, 5, 5, 1, 5, 0 with M_1 = 1: block 1 = rows (0, 5), block 2 = rows
  // (1, 2, 3, 4, 6), then the empty row 7. Widths below 16 are one lane a row, so at block size
  // 32 each block is one tile.
  std::mt19937_64 rng(testing::test_seed());
  const auto matrix_of = [](std::initializer_list<int> lengths) {
    CsrMatrix<double> m{0, 10, {0}, {}, {}};
    for (const int length : lengths) {
      for (int j = 0; j < length; ++j) {
        m.col_indices.push_back(j);
        m.values.push_back(1.0 + j);
      }
      m.row_offsets.push_back(static_cast<RowOffset>(m.col_indices.size()));
      ++m.rows;
    }
    return m;
  };
  const auto tiles_and_bases = [](const CsrMatrix<double>& m,
                                  const std::vector<std::int64_t>& boundaries) {
    const BceTiles tiles = make_bce_tiles(bce_block_shapes(df_features(m), boundaries),
                                          BceVariant::hopper, 32, kH100ResidentThreads);
    const BceLayout<double> bce = make_bce_layout<double>(m, boundaries, tiles.block_lanes);
    return std::pair{tiles, bce_tile_row_bases(bce.row_no, tiles)};
  };
  const CsrMatrix<double> mixed = matrix_of({1, 5, 5, 5, 5, 1, 5, 0});
  const auto [tiles, bases] = tiles_and_bases(mixed, {1});
  // The block of width 5 first (the longer chain), then the rows of 1, then the empty row.
  EXPECT_THAT(tiles.tile_first_row, ElementsAre(2, 0, 7));
  // rowNo = (0, 5, 1, 2, 3, 4, 6, 7): rows 1, 2, 3, 4, 6 are not consecutive, nor 0 and 5;
  // the empty row's one-row tile is.
  EXPECT_THAT(bases, ElementsAre(-1, -1, 7));
  // Row 6 empty instead: block 2 is rows 1..4, consecutive from row 1; rows 6, 7 likewise.
  const CsrMatrix<double> run = matrix_of({1, 5, 5, 5, 5, 1, 0, 0});
  EXPECT_THAT(tiles_and_bases(run, {1}).second, ElementsAre(1, -1, 6));
  // One block and no empty rows (k = 1): rowNo is the identity, every tile has its base.
  const CsrMatrix<double> one_block = rows_of_lengths(rng, {{3, 100}, {7, 100}}, 0, 20);
  const auto [one_tiles, one_bases] = tiles_and_bases(one_block, {});
  ASSERT_EQ(std::ssize(one_bases), one_tiles.size());
  for (std::int64_t t = 0; t < one_tiles.size(); ++t)
    EXPECT_EQ(one_bases[t], one_tiles.tile_first_row[t]);
  // The replay writes y through the bases (and rowNo elsewhere) as the kernel does.
  expect_matches_csr<double>(mixed, {1}, BceVariant::hopper, 32, "mixed tiles");
  expect_matches_csr<double>(run, {1}, BceVariant::hopper, 32, "consecutive tiles");
  expect_matches_csr<double>(one_block, {}, BceVariant::hopper, 32, "k = 1");
}

TEST(CudaBceLayout, DescriptorsCarryEachTilesSlotsLengthsAndRowBase) {
  // Rows of lengths 1, 5, 5, 5, 5, 1, 5, 0 with M_1 = 1 (as above): tiles (block 2 of width 5,
  // block 1 of width 1, the empty row), one lane a row at block size 32.
  CsrMatrix<double> m{0, 10, {0}, {}, {}};
  for (const int length : {1, 5, 5, 5, 5, 1, 5, 0}) {
    for (int j = 0; j < length; ++j) {
      m.col_indices.push_back(j);
      m.values.push_back(1.0);
    }
    m.row_offsets.push_back(static_cast<RowOffset>(m.col_indices.size()));
    ++m.rows;
  }
  const std::vector<std::int64_t> boundaries{1};
  const BceTiles tiles = make_bce_tiles(bce_block_shapes(df_features(m), boundaries),
                                        BceVariant::hopper, 32, kH100ResidentThreads);
  const BceLayout<double> bce = make_bce_layout<double>(m, boundaries, tiles.block_lanes);
  const std::vector<BceTileDescriptor> d = bce_tile_descriptors(bce, tiles);
  ASSERT_EQ(d.size(), 3u);
  const std::int32_t unsplit = std::numeric_limits<std::int32_t>::max();
  // Block 2: positions 2..6, its slots after block 1's 2 x 1, a step of its 5 rows.
  EXPECT_EQ(d[0], (BceTileDescriptor{.slot_base = 2, .step = 5, .first_row = 2, .end_row = 7,
                                     .row_base = -1, .lanes = 1, .uniform_length = 5,
                                     .min_length = 5, .first_slot = 0, .slot_end = unsplit,
                                     .block = 1, .piece = 0, .pieces = 1}));
  EXPECT_EQ(d[1], (BceTileDescriptor{.slot_base = 0, .step = 2, .first_row = 0, .end_row = 2,
                                     .row_base = -1, .lanes = 1, .uniform_length = 1,
                                     .min_length = 1, .first_slot = 0, .slot_end = unsplit,
                                     .block = 0, .piece = 0, .pieces = 1}));
  // The empty row: consecutive (its own base), no slots.
  EXPECT_EQ(d[2], (BceTileDescriptor{.slot_base = 27, .step = 1, .first_row = 7, .end_row = 8,
                                     .row_base = 7, .lanes = 1, .uniform_length = 0,
                                     .min_length = 0, .first_slot = 0, .slot_end = unsplit,
                                     .block = 2, .piece = 0, .pieces = 1}));
  // One block of rows of 2, 3 and 5 entries: no uniform length, every row has 2.
  std::mt19937_64 rng(testing::test_seed());
  const CsrMatrix<double> varied = rows_of_lengths(rng, {{2, 40}, {3, 40}, {5, 40}}, 0, 20);
  const BceTiles one = make_bce_tiles(bce_block_shapes(df_features(varied), {}),
                                      BceVariant::hopper, 32, kH100ResidentThreads);
  const BceLayout<double> one_layout = make_bce_layout<double>(varied, {}, one.block_lanes);
  for (const BceTileDescriptor& t : bce_tile_descriptors(one_layout, one)) {
    EXPECT_EQ(t.uniform_length, -1);
    EXPECT_EQ(t.min_length, 2);
  }
}

// The hopper kernel's tiles as launch parameters (bce_tile_runs.hpp): every tile's descriptor,
// as the kernel computes it from its run, is the one it would have loaded (the row base aside,
// -1 where rowNo holds the same row), and the runs are offered wherever they serve.
TEST(CudaBceTileRuns, EveryTilesDescriptorComesBackFromItsRun) {
  const std::uint64_t seed = testing::test_seed();
  std::cout << "seed " << seed << " (SPMVD_TEST_SEED)\n";
  std::mt19937_64 rng(seed);
  int offered = 0;
  std::set<std::size_t> capacities;  // BceLaunchRuns alternatives seen
  for (const auto& [rows, cols, max_length] :
       {std::tuple{700, 300, 120}, std::tuple{3000, 5000, 2000}, std::tuple{20000, 9000, 40}}) {
    const CsrMatrix<double> m = skewed_matrix(rng, rows, cols, max_length);
    const MatrixFeatures f = df_features(m);
    for (const auto& boundaries : partitions_to_test(f)) {
      for (const std::uint32_t block : {32u, 128u, 512u}) {
        const BceTiles tiles = make_bce_tiles(bce_block_shapes(f, boundaries), BceVariant::hopper,
                                              block, kH100ResidentThreads);
        const BceLayout<double> bce = make_bce_layout<double>(m, boundaries, tiles.block_lanes);
        const std::vector<BceTileDescriptor> d = bce_tile_descriptors(bce, tiles);
        const std::optional<BceTileRuns> runs = bce_tile_runs(d, block, kEveryTilingInOneWave);
        const bool split = std::ranges::any_of(tiles.block_pieces, [](int p) { return p > 1; });
        // Without split rows, one run a block with rows (its tiles are consecutive).
        const auto blocks = std::ssize(
            std::set<std::int32_t>(tiles.tile_block.begin(), tiles.tile_block.end()));
        SCOPED_TRACE(std::to_string(rows) + " rows, " + std::to_string(boundaries.size() + 1) +
                     " blocks, block size " + std::to_string(block));
        if (split || blocks > kBceMaxTileRuns) {
          EXPECT_FALSE(runs.has_value());
          continue;
        }
        ASSERT_TRUE(runs.has_value());
        ++offered;
        EXPECT_LE(runs->count, blocks);
        // The launch passes the fewest runs that hold them, and its tiles read the same.
        const BceLaunchRuns launch = bce_launch_runs(runs);
        capacities.insert(launch.index());
        for (std::int32_t t = 0; t < std::ssize(d); ++t) {
          BceTileDescriptor from_runs = bce_tile_from_runs(*runs, t);
          EXPECT_EQ(std::visit([&](const auto& r) { return bce_tile_from_runs(r, t); }, launch),
                    from_runs)
              << "tile " << t << " of a launch of " << runs->count << " runs";
          EXPECT_TRUE(from_runs.row_base == d[t].row_base || from_runs.row_base == -1) << t;
          from_runs.row_base = d[t].row_base;
          EXPECT_EQ(from_runs, d[t]) << "tile " << t;
        }
        std::visit(
            [&](const auto& r) {
              const auto capacity = static_cast<std::int32_t>(r.runs.size());
              EXPECT_GE(capacity, runs->count);
              EXPECT_TRUE(capacity == 1 || capacity / 2 < runs->count) << capacity;
            },
            launch);
      }
    }
  }
  EXPECT_GE(offered, 12);
  EXPECT_GE(capacities.size(), 3u) << "launches of 1, 2, 4 and 8 runs are not all exercised";
}

TEST(CudaBceTileRuns, BeyondOneWaveNoTileLosesItsRowBase) {
  // Rows of 1, 5, 5, 5, 5, 1, 0, 0 with M_1 = 1 at block size 32: block 2 is rows 1..4
  // (consecutive), block 1 rows 0 and 5 (not), the empty rows 6, 7 (consecutive): each run is
  // all or nothing, so the runs serve beyond one wave, and block 2's run keeps its base.
  const CsrMatrix<double> m = rows_of_lengths({1, 5, 5, 5, 5, 1, 0, 0}, 10);
  const std::vector<std::int64_t> boundaries{1};
  const auto descriptors = [&](const CsrMatrix<double>& matrix, std::uint32_t block) {
    const BceTiles tiles = make_bce_tiles(bce_block_shapes(df_features(matrix), boundaries),
                                          BceVariant::hopper, block, kH100ResidentThreads);
    return bce_tile_descriptors(make_bce_layout<double>(matrix, boundaries, tiles.block_lanes),
                                tiles);
  };
  const std::optional<BceTileRuns> runs = bce_tile_runs(descriptors(m, 32), 32, kOneTilesThreads);
  ASSERT_TRUE(runs.has_value());
  ASSERT_EQ(runs->count, 3);
  EXPECT_EQ(runs->runs[0].row_base, 1);
  EXPECT_EQ(runs->runs[1].row_base, -1);
  EXPECT_EQ(runs->runs[2].row_base, 6);
  // One block of 100 consecutive rows then 100 rows whose tiles at block size 32 are partly
  // consecutive: beyond one wave the descriptors stay (they spare rowNo), in one wave the
  // runs serve and that run reads rowNo.
  std::vector<std::int64_t> lengths(100, 3);
  for (int r = 0; r < 100; ++r)
    lengths.push_back(r % 40 == 0 ? 1 : 3);  // a row of 1 now and then breaks the runs
  const std::vector<BceTileDescriptor> d = descriptors(rows_of_lengths(lengths, 20), 32);
  ASSERT_TRUE(std::ranges::any_of(d, [](const auto& t) { return t.row_base >= 0; }));
  EXPECT_FALSE(bce_tile_runs(d, 32, kOneTilesThreads).has_value());
  const std::optional<BceTileRuns> one_wave = bce_tile_runs(d, 32, kEveryTilingInOneWave);
  ASSERT_TRUE(one_wave.has_value());
  EXPECT_EQ(one_wave->runs[0].row_base, -1);
}

TEST(CudaBceTileRuns, MoreRunsThanTheLaunchHoldsOrSplitRowsKeepTheDescriptors) {
  // Nine blocks (rows of 1..9 entries, boundaries at 1..8): nine runs, one too many.
  std::mt19937_64 rng(testing::test_seed());
  std::vector<std::pair<std::int64_t, std::int64_t>> lengths;
  for (std::int64_t l = 1; l <= 9; ++l) lengths.emplace_back(l, 50);
  const CsrMatrix<double> nine = rows_of_lengths(rng, lengths, 0, 20);
  const std::vector<std::int64_t> boundaries{1, 2, 3, 4, 5, 6, 7, 8};
  const BceTiles tiles = make_bce_tiles(bce_block_shapes(df_features(nine), boundaries),
                                        BceVariant::hopper, 32, kH100ResidentThreads);
  const std::vector<BceTileDescriptor> d =
      bce_tile_descriptors(make_bce_layout<double>(nine, boundaries, tiles.block_lanes), tiles);
  EXPECT_FALSE(bce_tile_runs(d, 32, kEveryTilingInOneWave).has_value());
  EXPECT_TRUE(
      bce_tile_runs(std::span(d).subspan(0, 8 * 2), 32, kEveryTilingInOneWave).has_value());
  // A row cut into pieces: its tiles are per piece.
  std::vector<BceTileDescriptor> split = d;
  split[0].pieces = 2;
  EXPECT_FALSE(bce_tile_runs(split, 32, kEveryTilingInOneWave).has_value());
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
  // The paper variant reads every slot: its parts are their rows padded to the width (the
  // blocks hold 8, 10 and 13 entries).
  const std::int64_t widths[] = {2, 4, 7}, rows[] = {5, 3, 2}, nnz[] = {10, 12, 14};
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

// The hopper kernel's rows stop at their own lengths: a hopper block is as wide as its warps
// walk (the expected longest of a warp's rows), its 2-4 lanes a row as that many one-lane rows;
// the paper variant's block is its width.
TEST(CudaBceRules, HopperPartsAreAsWideAsTheirWarpsWalk) {
  const CudaBceRules rules;
  const auto part_of = [&](const std::vector<std::pair<std::int64_t, std::int64_t>>& lengths,
                           BceVariant variant) {
    std::mt19937_64 rng(testing::test_seed());
    const MatrixFeatures f = df_features(rows_of_lengths(rng, lengths, 0, 100));
    const Candidate c{
        .format = kCudaBceFormatId,
        .params = FieldSet::of(CudaBceParams{.boundaries = {},
                                             .variant = static_cast<std::int64_t>(variant),
                                             .resident_threads = kH100ResidentThreads}),
        .launch = {.block_size = 128, .threads_per_row = 1, .grid_size = 1}};
    const std::vector<FormatPart> parts = rules.parts(f, c);
    EXPECT_EQ(parts.size(), 1u);
    return parts.front();
  };
  // 1000 rows of 2 and one of 10, one lane a row: a warp's 32 rows hold the 10 with probability
  // 1 - (1000/1001)^32 = 0.031, so it walks 2.25 slots on average.
  const FormatPart hopper = part_of({{2, 1000}, {10, 1}}, BceVariant::hopper);
  EXPECT_EQ(CudaEllRules::params_of(hopper.candidate).ell_width, 2u);
  EXPECT_EQ(hopper.features.rows, 1001);
  const FormatPart paper = part_of({{2, 1000}, {10, 1}}, BceVariant::paper);
  EXPECT_EQ(CudaEllRules::params_of(paper.candidate).ell_width, 10u);
  // Rows of 16 and 17 at 2 lanes a row: rows of 8 and 9 slots, two a row, 16 rows a warp.
  const FormatPart lanes = part_of({{16, 1000}, {17, 1}}, BceVariant::hopper);
  EXPECT_EQ(CudaEllRules::params_of(lanes.candidate).ell_width, 8u);
  EXPECT_EQ(lanes.features.rows, 2002);
  EXPECT_EQ(lanes.features.nnz, 16 * 1000 + 17 + 1) << "ceil(17 / 2) slots for each of its lanes: one more than the row has";
  // Every row of one length: the width itself.
  EXPECT_EQ(CudaEllRules::params_of(part_of({{7, 500}}, BceVariant::hopper).candidate).ell_width,
            7u);
}

TEST(CudaBceRowRuns, CountsTheRunsOfConsecutiveRowsOfEachLength) {
  // Lengths 2 2 3 3 3 2 0 2 2 5: length 2 in three runs (rows 0-1, 5, 7-8), 3 in one, 5 in one.
  const CsrMatrix<double> m = rows_of_lengths({2, 2, 3, 3, 3, 2, 0, 2, 2, 5}, 8);
  const MatrixFeatures f = df_features(m);
  const BceRowRuns runs = compute_bce_row_runs(m, f.distribution);
  EXPECT_THAT(runs.runs, ElementsAre(3, 1, 1));
  // A block's runs are bounded by its sets' runs, its rows and the rows outside it plus one.
  // Lengths 2-3 are rows 0-5 and 7-8, two runs; the sets' runs cannot see that rows 0-5 merge,
  // and the bound is the 2 rows outside plus one.
  EXPECT_EQ(bce_block_row_runs(f, runs, 2, 3), 3);
  EXPECT_EQ(bce_block_row_runs(f, runs, 2, 2), 3);
  EXPECT_EQ(bce_block_row_runs(f, runs, 5, 5), 1);
  EXPECT_EQ(bce_block_row_runs(f, runs, 2, 5), 2);  // all but the empty row: exact
}

TEST(CudaBceRowRuns, TheParallelCountEqualsASerialOneAcrossChunks) {
  std::mt19937_64 rng(20261124);
  std::uniform_int_distribution<std::int64_t> length(0, 3);
  std::vector<std::int64_t> lengths(300000);
  for (auto& l : lengths) l = length(rng) == 0 ? 1 : 2;  // runs that cross the 2^16-row chunks
  const CsrMatrix<double> m = rows_of_lengths(lengths, 4);
  const MatrixFeatures f = df_features(m);
  std::vector<std::int64_t> serial(f.distribution.size(), 0);
  for (std::size_t r = 0; r < lengths.size(); ++r)
    if (r == 0 || lengths[r - 1] != lengths[r]) ++serial[lengths[r] == 1 ? 0 : 1];
  EXPECT_EQ(compute_bce_row_runs(m, f.distribution).runs, serial);
}

// The block's runs are summed over its sets only, found by bisection in the ascending DF (OPA
// asks for every block): equal to the sum over every set of the DF whose length is in range,
// for every range of a seeded random matrix's lengths; and the runs read in place are the ones
// decoded.
TEST(CudaBceRowRuns, ABlocksRunsByBisectionEqualAScanOfEverySet) {
  const std::uint64_t seed = 20261124;
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<std::int64_t> length(0, 40);
  // Runs of a random length (0 to 40) and a third of the rows starting a new one.
  std::vector<std::int64_t> lengths{length(rng)};
  while (lengths.size() < 5000)
    lengths.push_back(length(rng) % 3 == 0 ? length(rng) : lengths.back());
  const CsrMatrix<double> m = rows_of_lengths(lengths, 64);
  const CudaBceRules rules;
  MatrixFeatures f = df_features(m);
  add_own_features(rules, m, f);
  const std::optional<BceRowRuns> decoded = cuda_bce_row_runs(f);
  const auto in_place = cuda_bce_row_runs_in_place(f);
  ASSERT_TRUE(decoded.has_value());
  ASSERT_TRUE(in_place.has_value());
  EXPECT_TRUE(std::equal(in_place->begin(), in_place->end(), decoded->runs.begin(),
                         decoded->runs.end()));
  const auto scanned = [&](std::int64_t first, std::int64_t last) {
    std::int64_t runs = 0, rows = 0;
    for (std::size_t s = 0; s < f.distribution.size(); ++s) {
      if (f.distribution[s].length < first || f.distribution[s].length > last) continue;
      runs += decoded->runs[s];
      rows += f.distribution[s].rows;
    }
    return std::min({runs, rows, f.rows - rows + 1});
  };
  for (std::int64_t first = 0; first <= 42; ++first)
    for (std::int64_t last = first; last <= 42; ++last)
      EXPECT_EQ(bce_block_row_runs(f, *in_place, first, last), scanned(first, last))
          << "seed " << seed << ", lengths [" << first << ", " << last << "]";
}

TEST(CudaBceRowRuns, InPlaceRefusesWhatDecodingRefuses) {
  MatrixFeatures f = df_features(rows_of_lengths({2, 2, 3}, 4));
  f.format_features.emplace("cuda_bce", FieldSet::of(BceRowRuns{.runs = {1}}));  // 2 sets
  EXPECT_THROW(cuda_bce_row_runs_in_place(f), Error);
  f.format_features.erase("cuda_bce");
  EXPECT_EQ(cuda_bce_row_runs_in_place(f), std::nullopt);
}

TEST(CudaBceRules, BlocksOfScatteredRowsCarryTheirRowMapAndYSectorBytes) {
  // Rows alternate lengths 2 and 3: two blocks of scattered rows, or one block of one run.
  std::vector<std::int64_t> lengths;
  for (int r = 0; r < 1000; ++r) lengths.push_back(r % 2 == 0 ? 2 : 3);
  const CsrMatrix<double> m = rows_of_lengths(lengths, 8);
  const CudaBceRules rules;
  MatrixFeatures f = df_features(m);
  add_own_features(rules, m, f);
  const auto candidate = [&](std::vector<std::int64_t> boundaries, std::int64_t variant) {
    const std::vector<BceBlockShape> shapes = bce_block_shapes(f, boundaries);
    const auto v = static_cast<BceVariant>(variant);
    return Candidate{
        .format = kCudaBceFormatId,
        .params = FieldSet::of(CudaBceParams{
            .boundaries = boundaries, .variant = variant, .resident_threads = kH100ResidentThreads}),
        .launch = {.block_size = 256,
                   .threads_per_row = 1,
                   .grid_size = static_cast<std::uint32_t>(
                       bce_tile_count(shapes, v, 256, kH100ResidentThreads))}};
  };
  const std::vector<FormatPart> split = rules.parts(f, candidate({2}, 1));
  ASSERT_EQ(split.size(), 2u);
  for (const FormatPart& part : split) {
    EXPECT_EQ(part.launch, 0);
    EXPECT_EQ(part.scattered_row_runs, 500);  // every row a run of its own
    EXPECT_EQ(part.row_map_bytes, 500u * 4);  // rowNo; one length a block: none read
  }
  const std::vector<FormatPart> one = rules.parts(f, candidate({}, 1));
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].scattered_row_runs, 0);     // one run: y written in order
  EXPECT_EQ(one[0].row_map_bytes, 1000u);  // a length byte a row (two lengths); rowNo skipped
  const std::vector<FormatPart> paper = rules.parts(f, candidate({}, 0));
  EXPECT_EQ(paper[0].row_map_bytes, 1000u * 4);  // rowNo, always read by Algorithm 4
  // Without the feature nothing is known of where the rows lie: nothing charged for runs.
  const std::vector<FormatPart> unknown = rules.parts(df_features(m), candidate({2}, 1));
  EXPECT_EQ(unknown[0].scattered_row_runs, 0);
}

// The hopper kernel reads the rows' lengths in a byte where every block whose rows have more
// than one length has none longer than 255, else in 4. The replay reads them as the kernel does.
TEST(CudaBceLayout, RowLengthsAreReadInAByteWhereEveryBlockAllowsIt) {
  std::vector<std::int64_t> lengths(200, 3);
  lengths.insert(lengths.end(), {100, 200, 257, 600, 0, 0, 0, 0, 0});
  const CsrMatrix<double> m = rows_of_lengths(lengths, 1000);
  const MatrixFeatures f = df_features(m);
  // One block of 3-600; blocks {3}, {100, 200}, {257, 600}; blocks {3}, {100, 200}, {257}, {600}.
  const std::vector<std::int64_t> one{}, three{3, 200}, four{3, 200, 257};
  EXPECT_FALSE(make_bce_layout<double>(m, one).lengths_in_bytes());
  EXPECT_FALSE(make_bce_layout<double>(m, three).lengths_in_bytes());
  const BceLayout<double> bytes = make_bce_layout<double>(m, four);
  ASSERT_TRUE(bytes.lengths_in_bytes());
  // In BCE order: the 200 rows of 3, 100, 200, then 257 and 600 (too long for a byte, each a
  // block of one length, not read: 0) and the empty rows.
  // (Built whole: GCC 12's -Warray-bounds misreads an insert into a vector of 200.)
  std::vector<std::uint8_t> want(209, 0);
  std::fill_n(want.begin(), 200, 3);
  want[200] = 100;
  want[201] = 200;
  EXPECT_EQ(bytes.row_length_bytes, want);
  for (const std::uint32_t block : {128u, 512u}) {
    expect_matches_csr<double>(m, one, BceVariant::hopper, block, "int lengths");
    expect_matches_csr<float>(m, four, BceVariant::hopper, block, "byte lengths fp32");
  }
  // The model's bytes for them (no rowNo: the row runs are not extracted), as the DF says.
  EXPECT_EQ(bce_length_bytes(bce_block_distributions(f, three)), 4u);
  EXPECT_EQ(bce_length_bytes(bce_block_distributions(f, four)), 1u);
  const CudaBceRules rules;
  const auto row_map_bytes = [&](std::vector<std::int64_t> boundaries) {
    const std::vector<BceBlockShape> shapes = bce_block_shapes(f, boundaries);
    const Candidate c{
        .format = kCudaBceFormatId,
        .params = FieldSet::of(CudaBceParams{.boundaries = std::move(boundaries),
                                             .variant = 1,
                                             .resident_threads = kH100ResidentThreads}),
        .launch = {.block_size = 256,
                   .threads_per_row = 1,
                   .grid_size = static_cast<std::uint32_t>(
                       bce_tile_count(shapes, BceVariant::hopper, 256, kH100ResidentThreads))}};
    std::vector<std::uint64_t> out;
    for (const FormatPart& part : rules.parts(f, c)) out.push_back(part.row_map_bytes);
    return out;
  };
  EXPECT_THAT(row_map_bytes(one), ElementsAre(204u * 4));
  EXPECT_THAT(row_map_bytes(three), ElementsAre(0u, 2u * 4, 2u * 4));
  EXPECT_THAT(row_map_bytes(four), ElementsAre(0u, 2u, 0u, 0u));
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
  // A block a row cut into 4 pieces of 16384 slots (64 a lane: kBceSlotsPerLanePerPiece), each
  // 8 warps: 32 warp-rows a row, 1600 of ceil(50000 / 32) = 1563, the chain each lane walks
  // 1563 / 32 -> 49 (196 uncut).
  EXPECT_EQ(parts[2].candidate.format, kCudaCsrVectorFormatId);
  EXPECT_EQ(parts[2].candidate.launch.threads_per_row, 32u);
  EXPECT_EQ(parts[2].features.rows, 1600);
  EXPECT_EQ(parts[2].features.row_length_max, 1563);
  EXPECT_GE(parts[2].features.nnz, 50 * 50000);  // rounded up a warp-row at most
  EXPECT_LT(parts[2].features.nnz, 50 * 50000 + 1600);
  // Only the block-wide rows are row blocks, a CUDA block a piece: 50 rows x 4.
  EXPECT_EQ(parts[0].row_blocks, 0);
  EXPECT_EQ(parts[1].row_blocks, 0);
  EXPECT_EQ(parts[2].row_blocks, 200);
  // The paper variant runs every block a thread a row: all cuda_ell.
  Candidate paper = c;
  paper.params = FieldSet::of(CudaBceParams{
      .boundaries = {3, 300}, .variant = 0, .resident_threads = kH100ResidentThreads});
  for (const FormatPart& part : rules.parts(f, paper))
    EXPECT_EQ(part.candidate.format, kCudaEllFormatId);
}

// The calibration's row-block candidates (models/row_block_waves.hpp): on short rows beside one
// of kBceBlockPerRowMinWidth, fewer rows than the GPU has warps, the hopper one-block partition
// at each block size, every row a CUDA block; none off a GPU.
TEST(CudaBceRules, RowBlockCandidatesRunEveryRowOfTheSampleAsABlock) {
  MatrixFeatures whole;
  whole.cols = 8447;
  const MatrixFeatures f =
      part_features(whole, {{1, 8446}, {kBceBlockPerRowMinWidth, 1}});
  const CudaBceRules rules;
  DeviceInfo h100{.is_gpu = true, .sm_count = 132, .max_threads_per_sm = 2048, .max_blocks_per_sm = 32};
  const std::vector<Candidate> candidates = rules.row_block_candidates(f, h100);
  ASSERT_EQ(candidates.size(), kBceBlockSizes.size());
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    EXPECT_EQ(candidates[i].launch.block_size, kBceBlockSizes[i]);
    const CudaBceParams params = CudaBceRules::params_of(candidates[i]);
    EXPECT_TRUE(params.boundaries.empty());
    EXPECT_EQ(params.variant, static_cast<std::int64_t>(BceVariant::hopper));
    std::int64_t row_blocks = 0;
    for (const FormatPart& part : rules.parts(f, candidates[i])) row_blocks += part.row_blocks;
    EXPECT_EQ(row_blocks, 8447) << "block size " << kBceBlockSizes[i];
    EXPECT_EQ(candidates[i].launch.grid_size, 8447u);
  }
  h100.is_gpu = false;
  EXPECT_TRUE(rules.row_block_candidates(f, h100).empty());
  // The calibration's sample itself lays out and multiplies as CSR at every block size, each
  // row a CUDA block.
  std::mt19937_64 rng(testing::test_seed());
  std::uniform_int_distribution<ColIndex> column(0, 8446);
  CsrMatrix<double> sample{8447, 8447, {0}, {}, {}};
  for (std::int64_t r = 0; r < 8447; ++r) {
    const std::int64_t length = r == 4000 ? kBceBlockPerRowMinWidth : 1;
    for (std::int64_t j = 0; j < length; ++j) {
      sample.col_indices.push_back(length == 1 ? column(rng) : static_cast<ColIndex>(j));
      sample.values.push_back(1.0 + 0.001 * static_cast<double>(j + r % 7));
    }
    sample.row_offsets.push_back(static_cast<RowOffset>(sample.col_indices.size()));
  }
  for (const std::uint32_t block : kBceBlockSizes) {
    const std::vector<std::int32_t> lanes =
        expect_matches_csr<double>(sample, {}, BceVariant::hopper, block, "row-block sample");
    ASSERT_FALSE(lanes.empty());
    EXPECT_EQ(lanes.front(), static_cast<std::int32_t>(block)) << "its one block of rows";
  }
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
    ASSERT_TRUE(chosen.size() == 6u || chosen.size() == 9u) << chosen.size();
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
  // OPA's partition (2 variants x 3 block sizes), then the one-block hopper candidates: 1.95
  // slots an entry padded to 41, within cuda_ell's bound.
  ASSERT_EQ(cs.size(), 9u);
  for (std::size_t i = 6; i < 9; ++i) {
    EXPECT_THAT(CudaBceRules::params_of(cs[i]).boundaries, ElementsAre());
    EXPECT_EQ(CudaBceRules::params_of(cs[i]).variant, static_cast<std::int64_t>(BceVariant::hopper));
    EXPECT_TRUE(rules.is_valid(cs[i], f, testing::h100()));
  }
  for (const Candidate& c : std::span(cs).first(6)) {
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
  // No one-block candidate beside them: 1640 slots an entry, beyond cuda_ell's bound of 20.
  ASSERT_EQ(cs.size(), 6u);
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
