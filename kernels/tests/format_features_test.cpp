// The formats' own features (FormatRules::own_features): cuda_sell's group padding and sorted
// gathers, cusparse_bsr's block counts, on tiny hand-checkable matrices; how feature extraction
// files them (MatrixFeatures::format_features, by format name) and how the typed accessors read
// them back, or refuse an entry of another shape.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "kernels/formats/cuda_sell/cuda_sell_features.hpp"
#include "kernels/formats/cuda_sell/cuda_sell_rules.hpp"
#include "kernels/formats/cusparse_bsr/cusparse_bsr_features.hpp"
#include "kernels/formats/cusparse_bsr/cusparse_bsr_rules.hpp"
#include "tuner/feature_extraction.hpp"

namespace spmvd {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Optional;

// Row r holds lengths[r] entries in columns 0..length-1.
CsrMatrix<double> matrix_with_row_lengths(const std::vector<int>& lengths, std::int64_t cols) {
  CsrMatrix<double> m;
  m.rows = static_cast<std::int64_t>(lengths.size());
  m.cols = cols;
  for (const int length : lengths) {
    for (int c = 0; c < length; ++c) {
      m.col_indices.push_back(c);
      m.values.push_back(1.0);
    }
    m.row_offsets.push_back(static_cast<RowOffset>(m.col_indices.size()));
  }
  return m;
}

// 70 rows: 40 of length 1, then 30 of length 3.
CsrMatrix<double> short_then_long_rows() {
  std::vector<int> lengths(70, 1);
  for (std::size_t r = 40; r < lengths.size(); ++r) lengths[r] = 3;
  return matrix_with_row_lengths(lengths, 10);
}

// A band of 64 rows, rows alternately of length 1 (column r) and 2 (columns r, r + 1): every
// group of 32 neighbouring rows gathers from 33 neighbouring columns.
CsrMatrix<double> alternating_band() {
  CsrMatrix<double> m;
  m.rows = 64;
  m.cols = 65;
  for (int r = 0; r < 64; ++r) {
    m.col_indices.push_back(r);
    if (r % 2 == 1) m.col_indices.push_back(r + 1);
    m.values.resize(m.col_indices.size(), 1.0);
    m.row_offsets.push_back(static_cast<RowOffset>(m.col_indices.size()));
  }
  return m;
}

// 5 x 4: 2x2 blocks (block row, block col): rows 0-1 -> (0,0), (0,1); rows 2-3 -> (1,0),
// (1,1); row 4 -> (2,0), (2,1): 6. 4x4: rows 0-3 -> (0,0); row 4 -> (1,0): 2.
//   [1 . . .]
//   [1 1 1 .]
//   [. . . .]
//   [. 1 . 1]
//   [1 . 1 .]
CsrMatrix<double> five_by_four() {
  return CsrMatrix<double>{
      5, 4, {0, 1, 4, 4, 6, 8}, {0, 0, 1, 2, 1, 3, 0, 2}, {1, 1, 1, 1, 1, 1, 1, 1}};
}

MatrixFeatures with_every_format(const CsrMatrix<double>& m) {
  return extract_features(m);
}

Candidate sell_candidate(std::uint32_t sort_window) {
  return Candidate{
      .format = kCudaSellFormatId,
      .params = FieldSet::of(CudaSellParams{.slice_height = 32, .sort_window = sort_window}),
      .launch = {.block_size = 128, .threads_per_row = 1, .grid_size = 1}};
}

// ---- cuda_sell ----------------------------------------------------------------------------

TEST(CudaSellFeatures, GroupPaddingCountsEveryRowAtItsGroupsLongest) {
  const CsrMatrix<double> m = short_then_long_rows();
  const CudaSellFeatures own = compute_cuda_sell_features(m, 0.0);
  // Groups of 32: rows 0-31 -> 1, rows 32-63 -> 3 (rows 40-63 are 3), rows 64-69 -> 3.
  EXPECT_THAT(own.padded_lengths_32, ElementsAre(1, 3));
  EXPECT_THAT(own.padded_rows_32, ElementsAre(32, 38));
  EXPECT_EQ(padded_distribution(own, 32), (std::vector<RowLengthCount>{{1, 32}, {3, 38}}));
  // Groups of 64: rows 0-63 -> 3, rows 64-69 -> 3.
  EXPECT_THAT(own.padded_lengths_64, ElementsAre(3));
  EXPECT_THAT(own.padded_rows_64, ElementsAre(70));
  EXPECT_EQ(padded_distribution(own, 64), (std::vector<RowLengthCount>{{3, 70}}));
  EXPECT_THAT(padded_distribution(own, 16), IsEmpty());  // not measured
}

TEST(CudaSellFeatures, PaddingAndSlotsAreThoseOfEachGroupsLongestRow) {
  // 1,003 rows of random lengths 0-40 (not a multiple of any group's height): every count
  // against the groups walked one by one.
  const std::uint64_t seed = 7;
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 random(seed);
  std::uniform_int_distribution<int> length(0, 40);
  std::vector<int> lengths(1003);
  for (int& l : lengths) l = length(random);
  const CudaSellFeatures own =
      compute_cuda_sell_features(matrix_with_row_lengths(lengths, 64), 0.0);
  const auto rows = static_cast<std::int64_t>(lengths.size());
  const auto longest_of_group = [&](std::int64_t first, std::int64_t group) {
    int longest = 0;
    for (std::int64_t r = first; r < std::min(first + group, rows); ++r)
      longest = std::max(longest, lengths[static_cast<std::size_t>(r)]);
    return std::int64_t{longest};
  };
  const auto slots = [&](std::int64_t group) {
    std::int64_t sum = 0;
    for (std::int64_t first = 0; first < rows; first += group)
      sum += longest_of_group(first, group) * (std::min(first + group, rows) - first);
    return sum;
  };
  EXPECT_EQ(own.sector_slots_4, slots(4));
  EXPECT_EQ(own.sector_slots_8, slots(8));
  for (const std::int64_t height : {std::int64_t{32}, std::int64_t{64}}) {
    SCOPED_TRACE("slice height " + std::to_string(height));
    std::map<std::int64_t, std::int64_t> rows_at_length;
    for (std::int64_t first = 0; first < rows; first += height)
      rows_at_length[longest_of_group(first, height)] += std::min(first + height, rows) - first;
    std::vector<RowLengthCount> expected;
    for (const auto& [l, n] : rows_at_length) expected.push_back({l, n});
    EXPECT_EQ(padded_distribution(own, height), expected);
  }
}

TEST(CudaSellFeatures, SectorSlotsCountEachSectorsRowsAtTheirLongest) {
  // 18 rows: every eighth row (0, 8, 16) of 8 entries, the others of 1; 36 entries.
  std::vector<int> lengths(18, 1);
  for (std::size_t r = 0; r < lengths.size(); r += 8) lengths[r] = 8;
  const CudaSellFeatures own = compute_cuda_sell_features(matrix_with_row_lengths(lengths, 8), 0.0);
  // Groups of 4: rows 0-3, 8-11 at 8 (32 each), 4-7, 12-15 at 1 (4 each), 16-17 at 8 (16).
  EXPECT_EQ(own.sector_slots_4, 32 + 4 + 32 + 4 + 16);
  // Groups of 8: rows 0-7 and 8-15 at 8 (64 each), 16-17 at 8 (16).
  EXPECT_EQ(own.sector_slots_8, 64 + 64 + 16);
  // Rows of one length leave nothing to skip: every slot is an entry.
  const CudaSellFeatures uniform =
      compute_cuda_sell_features(matrix_with_row_lengths(std::vector<int>(10, 3), 8), 0.0);
  EXPECT_EQ(uniform.sector_slots_4, 30);
  EXPECT_EQ(uniform.sector_slots_8, 30);
}

TEST(CudaSellFeatures, SortedGathersCountTheSectorsInTheSortedRowOrder) {
  const MatrixFeatures f = with_every_format(alternating_band());
  // Unsorted: group 0 holds columns 0-32 (5 sectors), group 1 columns 32-64 (5): 10 / 96.
  EXPECT_DOUBLE_EQ(f.x_sectors_per_nonzero, 10.0 / 96.0);
  const std::optional<CudaSellFeatures> own = cuda_sell_features(f);
  ASSERT_TRUE(own.has_value());
  // Windows 256 and 4096 both clamp to the 64 rows: one entry, the whole matrix sorted.
  EXPECT_THAT(own->sort_windows, ElementsAre(64));
  ASSERT_EQ(own->sorted_sectors_per_nonzero.size(), 1U);
  // Sorted whole: the 32 odd rows first (columns 1-64: 9 sectors), then the even rows
  // (columns 0, 2, ..., 62: 8 sectors): 17 / 96, the sort spreads each group over all of x.
  EXPECT_DOUBLE_EQ(own->sorted_sectors_per_nonzero[0], 17.0 / 96.0);
  EXPECT_DOUBLE_EQ(sorted_sectors_per_nonzero(f, 64), 17.0 / 96.0);
  EXPECT_DOUBLE_EQ(sorted_sectors_per_nonzero(f, 1'000'000), 17.0 / 96.0);  // clamped to rows
  EXPECT_DOUBLE_EQ(sorted_sectors_per_nonzero(f, 1), f.x_sectors_per_nonzero);
  // A window not measured: the unsorted gathers (no more -1 for "not measured").
  EXPECT_DOUBLE_EQ(sorted_sectors_per_nonzero(f, 16), f.x_sectors_per_nonzero);
}

// The slots a SELL layout stores once its rows are sorted by length within each window: slices
// of h consecutive sorted rows, each at its longest row (sell_slice_offsets), counted against a
// sort done here. Lengths 1-9 at random over 300 rows: windows 256 (a full one and one of 44
// rows) and the whole 300.
TEST(CudaSellFeatures, SortedSlotsAreEachSlicesLongestRowAfterTheWindowsSort) {
  std::mt19937 rng(7);
  std::vector<int> lengths(300);
  for (int& l : lengths) l = 1 + static_cast<int>(rng() % 9);
  const CsrMatrix<double> m = matrix_with_row_lengths(lengths, 16);
  const MatrixFeatures f = with_every_format(m);
  const std::optional<CudaSellFeatures> own = cuda_sell_features(f);
  ASSERT_TRUE(own.has_value());
  ASSERT_THAT(own->sort_windows, ElementsAre(256, 300));
  const auto expected = [&](std::int64_t window, std::int64_t height) {
    std::vector<int> sorted = lengths;
    for (std::size_t first = 0; first < sorted.size(); first += static_cast<std::size_t>(window))
      std::sort(sorted.begin() + static_cast<std::ptrdiff_t>(first),
                sorted.begin() + static_cast<std::ptrdiff_t>(std::min(
                                     sorted.size(), first + static_cast<std::size_t>(window))),
                std::greater<>());
    std::int64_t slots = 0;
    for (std::size_t first = 0; first < sorted.size(); first += static_cast<std::size_t>(height))
      slots += height *
               *std::max_element(
                   sorted.begin() + static_cast<std::ptrdiff_t>(first),
                   sorted.begin() + static_cast<std::ptrdiff_t>(std::min(
                                        sorted.size(), first + static_cast<std::size_t>(height))));
    return slots;
  };
  EXPECT_THAT(own->sorted_slots_32, ElementsAre(expected(256, 32), expected(300, 32)));
  EXPECT_THAT(own->sorted_slots_64, ElementsAre(expected(256, 64), expected(300, 64)));
  // What the rules store: the counted slots, not a bound; the window clamps to the rows.
  EXPECT_EQ(CudaSellRules::sell_slot_bound(f, 32, 256), expected(256, 32));
  EXPECT_EQ(CudaSellRules::sell_slot_bound(f, 64, 4096), expected(300, 64));
  EXPECT_EQ(sorted_slots(f, 32, 300), expected(300, 32));
  // Sorted within 256 rows, a slice holds far less padding than the matrix's longest rows
  // would give it (the bound without the count: each slice as wide as a distinct longest row).
  EXPECT_LT(expected(256, 32), 32 * 9 * 10);
  EXPECT_EQ(sorted_slots(f, 16, 256), std::nullopt);  // a height not counted
  EXPECT_EQ(sorted_slots(f, 32, 1), std::nullopt);    // unsorted
}

TEST(CudaSellFeatures, SortedGathersOfOneRowLengthAreTheUnsortedOnes) {
  const std::vector<int> lengths(300, 3);
  const MatrixFeatures f = with_every_format(matrix_with_row_lengths(lengths, 10));
  const std::optional<CudaSellFeatures> own = cuda_sell_features(f);
  ASSERT_TRUE(own.has_value());
  EXPECT_THAT(own->sort_windows, ElementsAre(256, 300));  // 4096 clamps to the 300 rows
  ASSERT_EQ(own->sorted_sectors_per_nonzero.size(), 2U);
  for (const double sectors : own->sorted_sectors_per_nonzero)
    EXPECT_DOUBLE_EQ(sectors, f.x_sectors_per_nonzero);
}

TEST(CudaSellFeatures, TheHookFilesThemUnderTheFormatsName) {
  const CsrMatrix<double> m = alternating_band();
  const MatrixFeatures f = with_every_format(m);
  const CudaSellRules rules;
  const std::optional<FieldSet> own = rules.own_features(m, f);
  ASSERT_TRUE(own.has_value());
  EXPECT_EQ(*own, FieldSet::of(compute_cuda_sell_features(m, f.x_sectors_per_nonzero)));
  ASSERT_TRUE(f.format_features.contains("cuda_sell"));
  EXPECT_EQ(f.format_features.at("cuda_sell"), *own);
  EXPECT_EQ(cuda_sell_features(f), own->as<CudaSellFeatures>("cuda_sell"));
}

// The tuner reads the entry in place once per candidate: the same lists as decoding gives.
TEST(CudaSellFeatures, ReadInPlaceTheyAreTheDecodedOnes) {
  for (const MatrixFeatures& f : {with_every_format(alternating_band()),
                                  with_every_format(five_by_four())}) {
    const std::optional<CudaSellFeatures> decoded = cuda_sell_features(f);
    const std::optional<CudaSellFeaturesView> in_place = cuda_sell_features_view(f);
    ASSERT_TRUE(decoded.has_value());
    ASSERT_TRUE(in_place.has_value());
    for (const std::int64_t height : {16, 32, 64})
      EXPECT_EQ(padded_distribution(*in_place, height), padded_distribution(*decoded, height));
    EXPECT_THAT(in_place->sort_windows, testing::ElementsAreArray(decoded->sort_windows));
    EXPECT_THAT(in_place->sorted_sectors_per_nonzero,
                testing::ElementsAreArray(decoded->sorted_sectors_per_nonzero));
    EXPECT_EQ(in_place->sector_slots_4, decoded->sector_slots_4);
    EXPECT_EQ(in_place->sector_slots_8, decoded->sector_slots_8);
  }
  MatrixFeatures absent = with_every_format(alternating_band());
  absent.format_features.erase("cuda_sell");
  EXPECT_EQ(cuda_sell_features_view(absent).has_value(), false);
  MatrixFeatures malformed = with_every_format(alternating_band());
  CudaSellFeatures own = *cuda_sell_features(malformed);
  own.padded_rows_32.push_back(1);  // one row count more than lengths
  malformed.format_features["cuda_sell"] = FieldSet::of(own);
  EXPECT_THROW(cuda_sell_features_view(malformed), Error);
}

TEST(CudaSellFeatures, AreAbsentWhereTheHookDidNotRun) {
  MatrixFeatures f = with_every_format(alternating_band());
  f.format_features.erase("cuda_sell");  // a calibration sample: no hook ran
  EXPECT_EQ(cuda_sell_features(f), std::nullopt);
  EXPECT_DOUBLE_EQ(sorted_sectors_per_nonzero(f, 64), f.x_sectors_per_nonzero);
}

TEST(CudaSellFeatures, RefuseAnEntryOfAnotherShape) {
  MatrixFeatures f = with_every_format(alternating_band());
  CudaSellFeatures own = *cuda_sell_features(f);
  own.padded_rows_32.push_back(1);  // one row count more than lengths
  f.format_features["cuda_sell"] = FieldSet::of(own);
  try {
    cuda_sell_features(f);
    FAIL() << "read parallel lists of different lengths";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    EXPECT_THAT(e.what(), HasSubstr("features of cuda_sell: parallel lists of different lengths"));
  }
  f.format_features["cuda_sell"] =
      FieldSet::of(CusparseBsrFeatures{.block_dims = {2}, .blocks = {1}});
  try {
    cuda_sell_features(f);
    FAIL() << "read cusparse_bsr's features as cuda_sell's";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    EXPECT_THAT(e.what(), HasSubstr("features of cuda_sell: field 'padded_lengths_32' is missing"));
  }
}

TEST(CudaSellRules, GathersInTheOrderOfTheCandidatesSortWindow) {
  const MatrixFeatures f = with_every_format(alternating_band());
  const CudaSellRules rules;
  EXPECT_DOUBLE_EQ(rules.gather_sectors_per_nonzero(f, sell_candidate(1)), 10.0 / 96.0);
  EXPECT_DOUBLE_EQ(rules.gather_sectors_per_nonzero(f, sell_candidate(64)), 17.0 / 96.0);
  // The base rule, for a format that keeps the matrix's order: the unsorted gathers.
  const CusparseBsrRules bsr;
  EXPECT_DOUBLE_EQ(
      bsr.gather_sectors_per_nonzero(f, Candidate{.format = kCusparseBsrFormatId,
                                                  .params = FieldSet::of(CusparseBsrParams{
                                                      .library_algorithm = 6, .block_dim = 2}),
                                                  .launch = {}}),
      10.0 / 96.0);
}

// ---- cusparse_bsr -------------------------------------------------------------------------

TEST(CusparseBsrFeatures, BlockCountsAreDistinctBlocksOfTheAlignedGrid) {
  const CusparseBsrFeatures own = compute_cusparse_bsr_features(five_by_four());
  EXPECT_THAT(own.block_dims, ElementsAre(2, 4));
  EXPECT_THAT(own.blocks, ElementsAre(6, 2));
  const MatrixFeatures f = with_every_format(five_by_four());
  EXPECT_THAT(bsr_block_count(f, 2), Optional(6));
  EXPECT_THAT(bsr_block_count(f, 4), Optional(2));
  EXPECT_EQ(bsr_block_count(f, 8), std::nullopt);  // not measured
}

TEST(CusparseBsrFeatures, TheHookFilesThemUnderTheFormatsName) {
  const CsrMatrix<double> m = five_by_four();
  const MatrixFeatures f = with_every_format(m);
  const std::optional<FieldSet> own = CusparseBsrRules().own_features(m, f);
  ASSERT_TRUE(own.has_value());
  EXPECT_EQ(*own, FieldSet::of(compute_cusparse_bsr_features(m)));
  ASSERT_TRUE(f.format_features.contains("cusparse_bsr"));
  EXPECT_EQ(f.format_features.at("cusparse_bsr"), *own);
}

TEST(CusparseBsrFeatures, AreAbsentWhereTheHookDidNotRun) {
  MatrixFeatures f = with_every_format(five_by_four());
  f.format_features.erase("cusparse_bsr");
  EXPECT_EQ(bsr_block_count(f, 2), std::nullopt);
}

TEST(CusparseBsrFeatures, RefuseAnEntryOfAnotherShape) {
  MatrixFeatures f = with_every_format(five_by_four());
  f.format_features["cusparse_bsr"] =
      FieldSet::of(CusparseBsrFeatures{.block_dims = {2, 4}, .blocks = {6}});
  try {
    bsr_block_count(f, 2);
    FAIL() << "read block_dims and blocks of different lengths";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    EXPECT_THAT(e.what(), HasSubstr("features of cusparse_bsr: block_dims and blocks of different "
                                    "lengths"));
  }
  f.format_features["cusparse_bsr"] = FieldSet(std::vector<NamedField>{
      {"block_dims", std::vector<std::int64_t>{2, 4}}, {"blocks", std::vector<double>{6.0, 2.5}}});
  try {
    bsr_block_count(f, 2);
    FAIL() << "read fractional block counts";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    EXPECT_THAT(e.what(),
                HasSubstr("features of cusparse_bsr: field 'blocks' is not a list of integers"));
  }
}

}  // namespace
}  // namespace spmvd
