// The classic catalogue's builder-independent rules (cuda_csr_scalar, cuda_ell, cuda_coo,
// cuda_hyb, cuda_sell, cusparse_coo, cusparse_sell, cusparse_bsr, cpu_coo): host-side layouts
// compared slot by slot on a 5x5 matrix, device bytes against those layouts, admissibility and
// candidate spaces on hand-written features. Kernel results: kernels_conformance(_gpu).

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/csr_normalize.hpp"
#include "core/error.hpp"
#include "kernels/format_registry.hpp"
#include "kernels/formats/common/coo_layout.hpp"
#include "kernels/formats/common/row_length_distribution.hpp"
#include "kernels/formats/common/rules_support.hpp"
#include "kernels/formats/common/sell_layout.hpp"
#include "kernels/formats/cpu_coo/cpu_coo_rules.hpp"
#include "kernels/formats/cuda_coo/cuda_coo_rules.hpp"
#include "kernels/formats/cuda_csr_scalar/cuda_csr_scalar_rules.hpp"
#include "kernels/formats/cuda_dia/cuda_dia_rules.hpp"
#include "kernels/formats/cuda_ell/cuda_ell_rules.hpp"
#include "kernels/formats/cuda_ell/ell_layout.hpp"
#include "kernels/formats/cuda_hyb/cuda_hyb_rules.hpp"
#include "kernels/formats/cuda_hyb/hyb_layout.hpp"
#include "kernels/formats/cuda_sell/cuda_sell_rules.hpp"
#include "kernels/formats/cusparse_bsr/bsr_layout.hpp"
#include "kernels/formats/cusparse_bsr/cusparse_bsr_features.hpp"
#include "kernels/formats/cusparse_bsr/cusparse_bsr_rules.hpp"
#include "kernels/formats/cusparse_coo/cusparse_coo_rules.hpp"
#include "kernels/formats/cusparse_csr/cusparse_csr_rules.hpp"
#include "kernels/formats/cusparse_sell/cusparse_sell_rules.hpp"
#include "kernels/tests/hand_written.hpp"
#include "tuner/feature_extraction.hpp"

namespace spmvd {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::IsEmpty;
using ::testing::Optional;

// Row lengths 2, 1, 4, 0, 2 (nnz 9): an empty row, a longest row, equal lengths to keep in
// order when sorting.
//   [1 . 2 . .]
//   [. 3 . . .]
//   [4 5 . 6 7]
//   [. . . . .]
//   [. . 8 . 9]
CsrMatrix<double> five_by_five() {
  return CsrMatrix<double>{
      5, 5, {0, 2, 3, 7, 7, 9}, {0, 2, 1, 0, 1, 3, 4, 2, 4}, {1, 2, 3, 4, 5, 6, 7, 8, 9}};
}

// Features with a hand-written row-length distribution (lengths ascending, no empty rows).
MatrixFeatures with_distribution(std::int64_t cols, std::vector<RowLengthCount> distribution) {
  MatrixFeatures f;
  f.cols = cols;
  double sum = 0, squares = 0;
  f.row_length_min = distribution.front().length;
  for (const RowLengthCount& b : distribution) {
    f.rows += b.rows;
    f.nnz += b.length * b.rows;
    f.row_length_max = std::max(f.row_length_max, b.length);
    sum += static_cast<double>(b.length * b.rows);
    squares += static_cast<double>(b.length * b.length * b.rows);
  }
  f.row_length_mean = sum / static_cast<double>(f.rows);
  f.row_length_stddev =
      std::sqrt(squares / static_cast<double>(f.rows) - f.row_length_mean * f.row_length_mean);
  f.distribution = std::move(distribution);
  return f;
}

// The features of m with every format's own (cuda_sell's slice padding, cusparse_bsr's block
// counts), whichever formats this build compiled.
MatrixFeatures features_of(const CsrMatrix<double>& m) {
  return extract_features(m);
}

template <typename Value>
std::uint64_t layout_bytes(const SellLayout<Value>& sell) {
  return sell.slice_offsets.size() * 8 + sell.col_indices.size() * 4 +
         sell.values.size() * sizeof(Value) + sell.permutation.size() * 4;
}

// ---- row-length distribution ------------------------------------------------------------

TEST(RowLengthDistribution, AnswersPaddingQueriesFromTheFeaturesAlone) {
  const MatrixFeatures f = features_of(five_by_five());  // lengths 2, 1, 4, 0, 2
  EXPECT_EQ(rows_with_length_at_least(f, 0), 5);
  EXPECT_EQ(rows_with_length_at_least(f, 2), 3);
  EXPECT_EQ(rows_with_length_at_least(f, 5), 0);
  EXPECT_EQ(entries_beyond_width(f, 0), 9);
  EXPECT_EQ(entries_beyond_width(f, 1), 5);  // 1 + 0 + 3 + 0 + 1
  EXPECT_EQ(entries_beyond_width(f, 4), 0);
  // Sorted 4, 2, 2, 1, 0 in groups of 2: leaders 4, 2, 0.
  EXPECT_EQ(sorted_group_leader_sum(f, 2), 6);
  EXPECT_EQ(sorted_group_leader_sum(f, 2, 2), 2 + 1 + 0);
  EXPECT_EQ(sorted_group_leader_sum(f, 5), 4);
  EXPECT_EQ(longest_rows_length_sum(f, 3), 8);
  EXPECT_EQ(longest_rows_length_sum(f, 10), 9);
}

// ---- layouts ----------------------------------------------------------------------------

TEST(CooLayout, SpellsOutTheRowOfEveryEntryInCsrOrder) {
  const CooLayout<double> coo = make_coo_layout<double>(five_by_five());
  EXPECT_THAT(coo.row_indices, ElementsAre(0, 0, 1, 2, 2, 2, 2, 4, 4));
  EXPECT_THAT(coo.col_indices, ElementsAre(0, 2, 1, 0, 1, 3, 4, 2, 4));
  EXPECT_THAT(coo.values, ElementsAre(1, 2, 3, 4, 5, 6, 7, 8, 9));
}

TEST(EllLayout, StoresRowsColumnMajorPaddedToTheLongestRow) {
  const SellLayout<float> ell = make_ell_layout<float>(five_by_five());
  EXPECT_EQ(ell_width(ell), 4);
  EXPECT_THAT(ell.col_indices, ElementsAreArray<ColIndex>({0,  1,  0, -1, 2,   //
                                                           2,  -1, 1, -1, 4,   //
                                                           -1, -1, 3, -1, -1,  //
                                                           -1, -1, 4, -1, -1}));
  EXPECT_THAT(ell.values, ElementsAreArray<float>({1, 3, 4, 0, 8,  //
                                                   2, 0, 5, 0, 9,  //
                                                   0, 0, 6, 0, 0,  //
                                                   0, 0, 7, 0, 0}));
  EXPECT_THAT(ell.permutation, IsEmpty());
}

TEST(SellLayout, UnsortedSlicesArePaddedToTheirOwnLongestRow) {
  const SellLayout<double> sell = make_sell_layout<double>(five_by_five(), 2, 1);
  EXPECT_THAT(sell.slice_offsets, ElementsAre(0, 4, 12, 16));  // widths 2, 4, 2; last slice padded
  EXPECT_THAT(sell.col_indices, ElementsAreArray<ColIndex>({0, 1, 2, -1,                 //
                                                            0, -1, 1, -1, 3, -1, 4, -1,  //
                                                            2, -1, 4, -1}));
  EXPECT_THAT(sell.values, ElementsAreArray<double>({1, 3, 2, 0,              //
                                                     4, 0, 5, 0, 6, 0, 7, 0,  //
                                                     8, 0, 9, 0}));
  EXPECT_THAT(sell.permutation, IsEmpty());
}

TEST(SellLayout, SortsRowsByLengthWithinTheWindowAndKeepsThePermutation) {
  const SellLayout<double> sell = make_sell_layout<double>(five_by_five(), 2, 5);
  // Lengths 2, 1, 4, 0, 2 sorted descending, stable: rows 2, 0, 4, 1, 3.
  EXPECT_THAT(sell.permutation, ElementsAre(2, 0, 4, 1, 3));
  EXPECT_THAT(sell.slice_offsets, ElementsAre(0, 8, 12, 12));  // widths 4, 2, 0
  EXPECT_THAT(sell.col_indices, ElementsAreArray<ColIndex>({0, 0, 1, 2, 3, -1, 4, -1,  //
                                                            2, 1, 4, -1}));
  EXPECT_THAT(sell.values, ElementsAreArray<double>({4, 1, 5, 2, 6, 0, 7, 0,  //
                                                     8, 3, 9, 0}));
}

// Slices are measured side by side, and a slice longer than one task's rows (ELL's one slice)
// across several tasks: every slice gets its own longest row wherever that row falls.
TEST(SellSliceOffsets, PadEachSliceToItsLongestRowWhateverItsLength) {
  const std::int64_t n = 100'000;
  CsrMatrix<double> m{n, 10, {0}, {}, {}};
  for (std::int64_t r = 0; r < n; ++r) {
    // One entry a row, three in row 70,001 (in a late task of the one-slice case), two in the
    // last row.
    const std::int64_t length = r == 70'001 ? 3 : (r == n - 1 ? 2 : 1);
    for (std::int64_t k = 0; k < length; ++k) {
      m.col_indices.push_back(static_cast<ColIndex>(k));
      m.values.push_back(1.0);
    }
    m.row_offsets.push_back(static_cast<RowOffset>(m.col_indices.size()));
  }
  EXPECT_EQ(longest_row(m), 3);
  EXPECT_EQ(sell_slice_offsets(m, n, {}), (std::vector<std::int64_t>{0, 3 * n}));
  const std::vector<std::int64_t> halves = sell_slice_offsets(m, n / 2, {});
  EXPECT_EQ(halves, (std::vector<std::int64_t>{0, n / 2, n / 2 + 3 * (n / 2)}));
  // Many short slices (n / 32 = 3125, all full): 32 slots each, 96 for slice 2187 (row
  // 70,001), 64 for the last (row 99,999).
  const std::vector<std::int64_t> short_slices = sell_slice_offsets(m, 32, {});
  ASSERT_EQ(short_slices.size(), 3126u);
  EXPECT_EQ(short_slices[2187], 32 * 2187);
  EXPECT_EQ(short_slices[2188], 32 * 2187 + 96);
  EXPECT_EQ(short_slices.back(), 32 * 3123 + 96 + 64);
  // In an order: reversed, rows 70,001 and 99,999 both fall in the first half.
  std::vector<std::int32_t> reversed(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) reversed[i] = static_cast<std::int32_t>(n - 1 - i);
  EXPECT_EQ(sell_slice_offsets(m, n / 2, reversed),
            (std::vector<std::int64_t>{0, 3 * (n / 2), 3 * (n / 2) + n / 2}));
}

TEST(SellRowOrder, SortsOnlyWithinEachWindow) {
  // Windows {0, 1, 2} (lengths 2, 1, 4) and {3, 4} (lengths 0, 2).
  EXPECT_THAT(sell_row_order(five_by_five(), 3), ElementsAre(2, 0, 1, 4, 3));
  EXPECT_THAT(sell_row_order(five_by_five(), 1), ElementsAre(0, 1, 2, 3, 4));
}

TEST(HybLayout, SplitsTheFirstKEntriesOfEachRowFromTheRemainder) {
  const HybLayout<double> hyb = make_hyb_layout<double>(five_by_five(), 1);
  EXPECT_THAT(hyb.ell_col_indices, ElementsAreArray<ColIndex>({0, 1, 0, -1, 2}));
  EXPECT_THAT(hyb.ell_values, ElementsAreArray<double>({1, 3, 4, 0, 8}));
  EXPECT_THAT(hyb.coo.row_indices, ElementsAre(0, 2, 2, 2, 4));
  EXPECT_THAT(hyb.coo.col_indices, ElementsAre(2, 1, 3, 4, 4));
  EXPECT_THAT(hyb.coo.values, ElementsAre(2, 5, 6, 7, 9));
}

TEST(HybLayout, WidthZeroIsAllCoo) {
  const HybLayout<float> hyb = make_hyb_layout<float>(five_by_five(), 0);
  EXPECT_THAT(hyb.ell_col_indices, IsEmpty());
  EXPECT_EQ(hyb.coo.values.size(), 9U);
}

TEST(BsrLayout, StoresEveryTouchedBlockWholeRowMajorSortedByBlockColumn) {
  const BsrLayout<double> bsr = make_bsr_layout<double>(five_by_five(), 2);
  EXPECT_EQ(bsr.block_rows, 3);
  EXPECT_EQ(bsr.block_cols, 3);
  EXPECT_THAT(bsr.row_offsets, ElementsAre(0, 2, 5, 7));
  EXPECT_THAT(bsr.col_indices, ElementsAre(0, 1, 0, 1, 2, 1, 2));
  EXPECT_THAT(bsr.values, ElementsAreArray<double>({1, 0, 0, 3,  // rows 0-1, cols 0-1
                                                    2, 0, 0, 0,  // rows 0-1, cols 2-3
                                                    4, 5, 0, 0,  // rows 2-3, cols 0-1
                                                    0, 6, 0, 0,  // rows 2-3, cols 2-3
                                                    7, 0, 0, 0,  // rows 2-3, cols 4-5
                                                    8, 0, 0, 0,  // row 4, cols 2-3
                                                    9, 0, 0, 0}));
  EXPECT_EQ(count_bsr_blocks(five_by_five(), 2), 7);
  EXPECT_EQ(count_bsr_blocks(five_by_five(), 4), 4);  // blocks (0,0) (0,1) (1,0) (1,1)
}

TEST(BsrLayout, RefusesABlockDimBelowOne) {
  EXPECT_THROW(make_bsr_layout<float>(five_by_five(), 0), Error);
}

// ---- ids, names, candidate spaces -------------------------------------------------------

std::vector<std::unique_ptr<FormatRules>> catalogue() {
  std::vector<std::unique_ptr<FormatRules>> rules;
  rules.push_back(std::make_unique<CudaCsrScalarRules>());
  rules.push_back(std::make_unique<CudaEllRules>());
  rules.push_back(std::make_unique<CudaCooRules>());
  rules.push_back(std::make_unique<CudaHybRules>());
  rules.push_back(std::make_unique<CudaSellRules>());
  rules.push_back(std::make_unique<CusparseCooRules>());
  rules.push_back(std::make_unique<CusparseSellRules>());
  rules.push_back(std::make_unique<CusparseBsrRules>());
  rules.push_back(std::make_unique<CpuCooRules>());
  return rules;
}

TEST(CatalogueRules, UsesTheIssuedAppendOnlyIdsAndNames) {
  const auto rules = catalogue();
  using IdName = std::pair<int, std::string>;
  std::vector<IdName> got;
  for (const auto& r : rules) got.emplace_back(r->id().value, std::string(r->name()));
  EXPECT_THAT(got, ElementsAre(IdName{4, "cuda_csr_scalar"}, IdName{5, "cuda_ell"},
                               IdName{6, "cuda_coo"}, IdName{7, "cuda_hyb"}, IdName{8, "cuda_sell"},
                               IdName{9, "cusparse_coo"}, IdName{10, "cusparse_sell"},
                               IdName{11, "cusparse_bsr"}, IdName{12, "cpu_coo"}));
  for (const auto& r : rules) EXPECT_EQ(r->needs_gpu(), r->name() != "cpu_coo") << r->name();
}

// cuda_sell, cuda_bce and cuda_strip decide admissibility by stopping at the first candidate
// that fits the budget: the same answer as comparing the smallest candidate's bytes, at budgets
// just below, at and above it.
TEST(CatalogueRules, TheFirstCandidateThatFitsAdmitsAsTheSmallestDoes) {
  // 20,000 rows of 3, 2,000 of 40 and 10 of 3,000: a strip separator, BCE blocks, SELL padding.
  CsrMatrix<double> m{22010, 5000, {0}, {}, {}};
  for (std::int64_t r = 0; r < m.rows; ++r) {
    const std::int64_t length = r % 2201 == 0 ? 3000 : r % 11 == 0 ? 40 : 3;
    for (std::int64_t c = 0; c < length; ++c) {
      m.col_indices.push_back(static_cast<ColIndex>((r * 7 + c * 13) % m.cols));
      m.values.push_back(1.0);
    }
    m.row_offsets.push_back(static_cast<RowOffset>(m.col_indices.size()));
  }
  sort_rows_and_sum_duplicates(m);
  const MatrixFeatures f = features_of(m);
  const DeviceInfo device = testing::h100();
  int checked = 0;
  for (const std::string_view name : {"cuda_sell", "cuda_bce", "cuda_strip"}) {
    const FormatEntry* entry = format_registry().find(name);
    if (entry == nullptr) continue;  // not compiled into this build
    SCOPED_TRACE(std::string(name));
    const FormatRules& rules = *entry->rules;
    const std::uint64_t smallest = smallest_candidate_bytes(rules, f, device, Precision::fp64);
    ASSERT_LT(smallest, ~std::uint64_t{0});  // offers candidates here
    for (const std::uint64_t budget : {smallest - 1, smallest, smallest + 1, ~std::uint64_t{0}})
      EXPECT_EQ(rules.admissible(f, device, Precision::fp64, budget), smallest <= budget);
    ++checked;
  }
  EXPECT_EQ(checked, 3);
}

TEST(CatalogueRules, EveryCandidateIsConcreteAndValidForItsFormat) {
  const MatrixFeatures f = features_of(five_by_five());
  for (const auto& r : catalogue()) {
    SCOPED_TRACE(std::string(r->name()));
    const DeviceInfo device = r->needs_gpu() ? testing::h100() : testing::eight_core_cpu();
    const std::vector<Candidate> space = r->candidates(f, device);
    // BSR would store this 5x5 matrix mostly as fill: it offers nothing and is inadmissible.
    if (r->id() == kCusparseBsrFormatId) {
      EXPECT_TRUE(space.empty());
      EXPECT_FALSE(r->admissible(f, device, Precision::fp64, ~std::uint64_t{0}));
      continue;
    }
    ASSERT_FALSE(space.empty());
    for (const Candidate& c : space) {
      EXPECT_EQ(c.format, r->id());
      EXPECT_TRUE(r->is_valid(c, f, device));
      // Our own kernels need a concrete launch; cuSPARSE and TBB choose theirs (launch == {}).
      if (r->name().starts_with("cuda_")) {
        EXPECT_GT(c.launch.block_size, 0U);
        EXPECT_EQ(c.launch.block_size % 32, 0U);
        EXPECT_GT(c.launch.grid_size, 0U);
      } else {
        EXPECT_EQ(c.launch, LaunchConfig{});
      }
    }
    // No duplicates: each candidate is measured once.
    for (std::size_t i = 0; i < space.size(); ++i)
      for (std::size_t j = i + 1; j < space.size(); ++j) EXPECT_FALSE(space[i] == space[j]);
  }
}

TEST(CatalogueRules, GpuFormatsAreNotAdmissibleOnTheCpuAndCpuCooNotOnTheGpu) {
  const MatrixFeatures f = features_of(five_by_five());
  for (const auto& r : catalogue()) {
    SCOPED_TRACE(std::string(r->name()));
    const std::uint64_t plenty = std::uint64_t{1} << 40;
    EXPECT_EQ(r->admissible(f, testing::eight_core_cpu(), Precision::fp64, plenty),
              !r->needs_gpu());
    if (r->name() != "cusparse_bsr") {  // its fill-in rule is tested below
      EXPECT_EQ(r->admissible(f, testing::h100(), Precision::fp64, plenty), r->needs_gpu());
    }
  }
}

// A plan stored by another version may carry parameters of another shape: is_valid drops it
// (to be re-tuned), it never runs nor throws.
TEST(CatalogueRules, RejectsAStoredCandidateWhoseParamsHaveAnotherShape) {
  const MatrixFeatures f = features_of(five_by_five());
  for (const auto& r : catalogue()) {
    SCOPED_TRACE(std::string(r->name()));
    const DeviceInfo device = r->needs_gpu() ? testing::h100() : testing::eight_core_cpu();
    const std::vector<Candidate> space = r->candidates(f, device);
    if (space.empty()) continue;  // cusparse_bsr on this matrix
    Candidate extra = space.front();
    std::vector<NamedField> fields = extra.params.fields();
    fields.push_back({"written_by_another_version", std::int64_t{1}});
    extra.params = FieldSet(std::move(fields));
    EXPECT_FALSE(r->is_valid(extra, f, device));
    if (!space.front().params.empty()) {
      Candidate missing = space.front();
      missing.params = {};
      EXPECT_FALSE(r->is_valid(missing, f, device));
    }
  }
}

TEST(CatalogueRules, ParamsOfNamesTheFieldAStoredCandidateLacks) {
  const Candidate bare{.format = kCudaSellFormatId, .params = {}, .launch = {}};
  try {
    CudaSellRules::params_of(bare);
    FAIL() << "read cuda_sell's parameters from an empty set";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    EXPECT_STREQ(e.what(), "cuda_sell: field 'slice_height' is missing");
  }
  // cusparse_sell's parameters are not cuda_sell's: sort_window is missing.
  const Candidate other{
      .format = kCudaSellFormatId,
      .params = FieldSet::of(CusparseSellParams{.slice_height = 32, .library_algorithm = 5}),
      .launch = {}};
  try {
    CudaSellRules::params_of(other);
    FAIL() << "read cusparse_sell's parameters as cuda_sell's";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "cuda_sell: field 'sort_window' is missing");
  }
  const Candidate wide{.format = kCudaEllFormatId,
                       .params = FieldSet({{"ell_width", std::int64_t{1} << 32}}),
                       .launch = {}};
  try {
    CudaEllRules::params_of(wide);
    FAIL() << "read an ell_width beyond 32 bits";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "cuda_ell: field 'ell_width' value 4294967296 is out of its range");
  }
}

TEST(CatalogueRules, EveryFormatRespectsTheMemoryBudget) {
  const MatrixFeatures f = features_of(five_by_five());
  for (const auto& r : catalogue()) {
    SCOPED_TRACE(std::string(r->name()));
    const DeviceInfo device = r->needs_gpu() ? testing::h100() : testing::eight_core_cpu();
    EXPECT_FALSE(r->admissible(f, device, Precision::fp32, 16)) << "16 bytes hold no format";
  }
}

// ---- per-format rules --------------------------------------------------------------------

TEST(CudaCsrScalarRules, SweepsFourBlockSizesWithOneThreadPerRow) {
  const CudaCsrScalarRules rules;
  const auto space = rules.candidates(testing::features(1000, 1000, 5000), testing::h100());
  ASSERT_EQ(space.size(), 4U);
  for (std::size_t i = 0; i < space.size(); ++i) {
    EXPECT_EQ(space[i].launch.block_size, kCsrScalarBlockSizes[i]);
    EXPECT_EQ(space[i].launch.threads_per_row, 1U);
  }
  EXPECT_EQ(space[0].launch.grid_size, 16U);  // ceil(1000 / 64)
  EXPECT_EQ(rules.device_bytes(testing::features(1000, 1000, 5000), Precision::fp32, space[0]),
            1001U * 8 + 5000U * (4 + 4));
}

TEST(CudaEllRules, DeviceBytesMatchTheLayoutPaddingIncluded) {
  const CudaEllRules rules;
  const MatrixFeatures f = features_of(five_by_five());
  const Candidate c = rules.candidates(f, testing::h100()).front();
  EXPECT_EQ(CudaEllRules::params_of(c).ell_width, 4U);
  const SellLayout<double> ell = make_ell_layout<double>(five_by_five());
  EXPECT_EQ(rules.device_bytes(f, Precision::fp64, c),
            ell.col_indices.size() * 4 + ell.values.size() * 8);
  EXPECT_EQ(rules.device_bytes(f, Precision::fp32, c), 20U * (4 + 4));
}

TEST(CudaEllRules, RejectsPaddingAboveTwentyTimesTheNonZeros) {
  const CudaEllRules rules;
  // 1000 rows of length 1 and one of length 20: 1001 * 20 slots for 1020 entries (19.6x).
  const MatrixFeatures fits = with_distribution(5000, {{1, 1000}, {20, 1}});
  EXPECT_TRUE(rules.admissible(fits, testing::h100(), Precision::fp64, std::uint64_t{1} << 30));
  // One row of length 30: 1001 * 30 slots for 1030 entries (29.2x).
  const MatrixFeatures padded = with_distribution(5000, {{1, 1000}, {30, 1}});
  EXPECT_FALSE(rules.admissible(padded, testing::h100(), Precision::fp64, std::uint64_t{1} << 30));
}

TEST(CudaEllRules, RejectsPaddedArraysAboveTheBudget) {
  const CudaEllRules rules;
  const MatrixFeatures f = with_distribution(100, {{3, 100}});
  const std::uint64_t bytes = 100 * 3 * (4 + 8);
  EXPECT_TRUE(rules.admissible(f, testing::h100(), Precision::fp64, bytes));
  EXPECT_FALSE(rules.admissible(f, testing::h100(), Precision::fp64, bytes - 1));
}

TEST(CudaCooRules, CarriesEntriesPerThreadInTheGridSize) {
  EXPECT_EQ(CudaCooRules::grid_size(100000, 256, 8), 49U);  // ceil(100000 / 2048)
  EXPECT_EQ(CudaCooRules::grid_size(0, 256, 8), 1U);
  const CudaCooRules rules;
  const auto f = testing::features(1000, 1000, 100000);
  const auto space = rules.candidates(f, testing::h100());
  EXPECT_EQ(space.size(), kCooBlockSizes.size() * kCooEntriesPerThread.size());
  EXPECT_EQ(rules.device_bytes(f, Precision::fp64, space[0]), 100000U * (4 + 4 + 8));
}

TEST(CudaCooRules, DropsCandidatesWhoseGridsCoincide) {
  // 9 entries: every (block, entries-per-thread) pair needs one block.
  const CudaCooRules rules;
  const auto space = rules.candidates(features_of(five_by_five()), testing::h100());
  EXPECT_EQ(space.size(), kCooBlockSizes.size());
}

TEST(CudaHybRules, PicksBellGarlandsWidth) {
  // >= 5 non-zeros in 7000 rows >= max(4096, 12000 / 3): K = 5.
  EXPECT_EQ(CudaHybRules::bell_garland_ell_width(with_distribution(100, {{3, 5000}, {5, 7000}})),
            5);
  // Only 2000 rows reach 10 (< 4096); all 12000 reach 2: K = 2.
  EXPECT_EQ(CudaHybRules::bell_garland_ell_width(with_distribution(100, {{2, 10000}, {10, 2000}})),
            2);
  // 30000 rows: 5000 of length 8 miss rows / 3 = 10000; 30000 reach 1: K = 1.
  EXPECT_EQ(CudaHybRules::bell_garland_ell_width(with_distribution(100, {{1, 25000}, {8, 5000}})),
            1);
  // Fewer than 4096 rows: ELL never pays, all COO.
  EXPECT_EQ(CudaHybRules::bell_garland_ell_width(features_of(five_by_five())), 0);
}

TEST(CudaHybRules, SweepsTheRuleMeanAndMeanPlusOneDeviation) {
  // Lengths 2, 1, 4, 0, 2: mean 1.8 -> 2, stddev 1.327 -> ceil(3.13) = 4, rule 0.
  EXPECT_THAT(CudaHybRules::ell_widths(features_of(five_by_five())), ElementsAre(0, 2, 4));
}

TEST(CudaHybRules, DeviceBytesMatchTheLayout) {
  const CudaHybRules rules;
  const MatrixFeatures f = features_of(five_by_five());
  const Candidate c{.format = kCudaHybFormatId,
                    .params = FieldSet::of(CudaHybParams{.ell_width = 1}),
                    .launch = {.block_size = 128, .threads_per_row = 1, .grid_size = 1}};
  const HybLayout<double> hyb = make_hyb_layout<double>(five_by_five(), 1);
  EXPECT_EQ(rules.device_bytes(f, Precision::fp64, c), hyb.ell_col_indices.size() * 4 +
                                                           hyb.ell_values.size() * 8 +
                                                           hyb.coo.values.size() * (4 + 4 + 8));
}

TEST(CudaSellRules, SweepsSliceHeightsAndSortWindowsUpToAllRows) {
  EXPECT_THAT(CudaSellRules::sort_windows(testing::features(300, 300, 900)),
              ElementsAre(1, 256, 300));
  EXPECT_THAT(CudaSellRules::sort_windows(testing::features(10000, 300, 900)),
              ElementsAre(1, 256, 4096, 10000));
  EXPECT_THAT(CudaSellRules::sort_windows(testing::features(1, 300, 9)), ElementsAre(1));
  const CudaSellRules rules;
  EXPECT_EQ(rules.candidates(testing::features(10000, 300, 900), testing::h100()).size(),
            2U * 4U * kSellBlockSizes.size());
}

TEST(CudaSellRules, DeviceBytesAreExactForAFullSortAndABoundOtherwise) {
  const CudaSellRules rules;
  const MatrixFeatures f = features_of(five_by_five());
  const auto candidate = [](std::uint32_t window) {
    return Candidate{
        .format = kCudaSellFormatId,
        .params = FieldSet::of(CudaSellParams{.slice_height = 2, .sort_window = window}),
        .launch = {.block_size = 128, .threads_per_row = 1, .grid_size = 1}};
  };
  EXPECT_EQ(rules.device_bytes(f, Precision::fp64, candidate(5)),
            layout_bytes(make_sell_layout<double>(five_by_five(), 2, 5)));
  for (const std::uint32_t window : {1U, 2U, 3U}) {
    SCOPED_TRACE(window);
    EXPECT_GE(rules.device_bytes(f, Precision::fp32, candidate(window)),
              layout_bytes(make_sell_layout<float>(five_by_five(), 2, window)));
  }
}

TEST(CudaSellRules, SlotBoundHoldsForTheWorstRowOrder) {
  // 64 rows of length 1 and 2 of length 50, C = 32: the long rows in different slices cost
  // 32 * (50 + 50) slots; sorted together they cost 32 * (50 + 1).
  const MatrixFeatures f = with_distribution(100, {{1, 64}, {50, 2}});
  EXPECT_EQ(CudaSellRules::sell_slot_bound(f, 32, 1), 32 * (50 + 50 + 1));
  EXPECT_EQ(CudaSellRules::sell_slot_bound(f, 32, 66), 32 * (50 + 1 + 1));
}

// 66 rows: rows 0 and 40 (different slices of 32) of 50 entries, the rest of 1.
CsrMatrix<double> two_long_rows() {
  CsrMatrix<double> m{66, 100, {0}, {}, {}};
  for (std::int64_t r = 0; r < 66; ++r) {
    const std::int64_t length = r == 0 || r == 40 ? 50 : 1;
    for (std::int64_t c = 0; c < length; ++c) {
      m.col_indices.push_back(static_cast<ColIndex>(c));
      m.values.push_back(1.0);
    }
    m.row_offsets.push_back(static_cast<RowOffset>(m.col_indices.size()));
  }
  return m;
}

TEST(CudaSellRules, UnsortedSlotsComeFromTheGroupPadding) {
  const CsrMatrix<double> m = two_long_rows();
  const MatrixFeatures f = features_of(m);
  // Slices of 32: widths 50, 50 and 1 (rows 64-65, padded to 32 rows at the bound's 50).
  EXPECT_EQ(CudaSellRules::sell_slot_bound(f, 32, 1), 32 * 50 + 32 * 50 + 2 * 1 + 30 * 50);
  // The layout never exceeds it.
  EXPECT_GE(CudaSellRules::sell_slot_bound(f, 32, 1),
            static_cast<std::int64_t>(make_sell_layout<double>(m, 32, 1).col_indices.size()));
  // Both long rows in one slice of 64: 64 * 50 + the second slice's 2 rows (+62 padding rows).
  EXPECT_EQ(CudaSellRules::sell_slot_bound(f, 64, 1), 64 * 50 + 2 * 1 + 62 * 50);
}

// A multiply reads a slot's sector only where one of the sector's rows still runs: the
// padding behind a long row costs bytes only in the sectors it shares with that row.
TEST(SellRules, UnsortedStreamedBytesReadPaddingOnlyInTheSectorsOfARunningRow) {
  const MatrixFeatures f = features_of(two_long_rows());
  // Groups of 4: two at 50 (rows 0-3, 40-43), 14 of 4 rows at 1, rows 64-65 at 1.
  const std::uint64_t slots_4 = 2 * 4 * 50 + 14 * 4 + 2;
  // Groups of 8: two at 50 (rows 0-7, 40-47), 6 of 8 rows at 1, rows 64-65 at 1.
  const std::uint64_t slots_8 = 2 * 8 * 50 + 6 * 8 + 2;
  EXPECT_EQ(CudaSellRules::unsorted_slot_stream_bytes(f, Precision::fp64),
            slots_8 * 4 + slots_4 * 8);
  EXPECT_EQ(CudaSellRules::unsorted_slot_stream_bytes(f, Precision::fp32), slots_8 * (4 + 4));

  const CudaSellRules cuda_sell;
  const Candidate unsorted{
      .format = kCudaSellFormatId,
      .params = FieldSet::of(CudaSellParams{.slice_height = 32, .sort_window = 1}),
      .launch = {.block_size = 128, .threads_per_row = 1, .grid_size = 1}};
  // 3 slices: 4 64-bit offsets.
  EXPECT_EQ(cuda_sell.streamed_bytes(f, Precision::fp64, unsorted),
            4 * 8 + slots_8 * 4 + slots_4 * 8);
  EXPECT_LT(cuda_sell.streamed_bytes(f, Precision::fp64, unsorted),
            cuda_sell.device_bytes(f, Precision::fp64, unsorted) / 5);
  // Sorted rows are read as stored.
  Candidate sorted = unsorted;
  sorted.params = FieldSet::of(CudaSellParams{.slice_height = 32, .sort_window = 66});
  EXPECT_EQ(cuda_sell.streamed_bytes(f, Precision::fp64, sorted),
            cuda_sell.device_bytes(f, Precision::fp64, sorted));

  const CusparseSellRules cusparse_sell;
  const Candidate library{.format = kCusparseSellFormatId,
                          .params = FieldSet::of(CusparseSellParams{
                              .slice_height = 32, .library_algorithm = kCusparseSpmvSellAlg1}),
                          .launch = {}};
  // 32-bit offsets, and the workspace bound as device_bytes counts it.
  EXPECT_EQ(cusparse_sell.streamed_bytes(f, Precision::fp32, library),
            4 * 4 + slots_8 * 8 + CusparseCsrRules::workspace_bound_bytes(66));

  // Without cuda_sell's features (a calibration sample), the stored slots.
  MatrixFeatures bare = f;
  bare.format_features.erase("cuda_sell");
  EXPECT_EQ(cuda_sell.streamed_bytes(bare, Precision::fp64, unsorted),
            cuda_sell.device_bytes(bare, Precision::fp64, unsorted));
  EXPECT_EQ(cusparse_sell.streamed_bytes(bare, Precision::fp64, library),
            cusparse_sell.device_bytes(bare, Precision::fp64, library));
}

// Rows of one length: nothing to skip, every stored byte is read.
TEST(SellRules, StreamedBytesOfRowsOfOneLengthAreTheStoredOnes) {
  CsrMatrix<double> m{64, 68, {0}, {}, {}};
  for (std::int64_t r = 0; r < 64; ++r) {
    for (std::int64_t c = 0; c < 5; ++c) {
      m.col_indices.push_back(static_cast<ColIndex>(r + c));
      m.values.push_back(1.0);
    }
    m.row_offsets.push_back(static_cast<RowOffset>(m.col_indices.size()));
  }
  const MatrixFeatures f = features_of(m);
  const CudaSellRules cuda_sell;
  const Candidate unsorted{
      .format = kCudaSellFormatId,
      .params = FieldSet::of(CudaSellParams{.slice_height = 32, .sort_window = 1}),
      .launch = {.block_size = 128, .threads_per_row = 1, .grid_size = 1}};
  for (const Precision p : {Precision::fp32, Precision::fp64})
    EXPECT_EQ(cuda_sell.streamed_bytes(f, p, unsorted), cuda_sell.device_bytes(f, p, unsorted));
}

TEST(CudaSellRules, FallsBackToEllPaddingForFeaturesWithoutADistribution) {
  // Hand-written features: 100 rows, 300 entries, longest row 50, no distribution.
  MatrixFeatures f;
  f.rows = 100;
  f.cols = 100;
  f.nnz = 300;
  f.row_length_max = 50;
  EXPECT_EQ(CudaSellRules::sell_slot_bound(f, 32, 100), 32 * 4 * 50);  // 4 slices of width 50
  EXPECT_EQ(CudaHybRules::coo_entry_count(f, 3), 300);
  EXPECT_EQ(CusparseBsrRules::bsr_block_upper_bound(f, 2), 300);
}

TEST(CusparseCooRules, ProposesCooAlgorithmsOneAndTwo) {
  const CusparseCooRules rules;
  const auto f = testing::features(100, 100, 700);
  const auto space = rules.candidates(f, testing::h100());
  ASSERT_EQ(space.size(), 2U);
  // CUSPARSE_SPMV_COO_ALG1 and ALG2, stored in plans.
  EXPECT_EQ(CusparseCooRules::params_of(space[0]).library_algorithm, 1U);
  EXPECT_EQ(CusparseCooRules::params_of(space[1]).library_algorithm, 4U);
  EXPECT_EQ(rules.device_bytes(f, Precision::fp32, space[0]),
            700U * (4 + 4 + 4) + CusparseCsrRules::workspace_bound_bytes(100));
}

TEST(CusparseCooRules, RejectsMoreEntriesThanThirtyTwoBitIndicesReach) {
  const CusparseCooRules rules;
  const auto big = testing::features(1 << 20, 1 << 20, std::int64_t{1} << 31);
  EXPECT_FALSE(rules.admissible(big, testing::h100(), Precision::fp32, ~std::uint64_t{0}));
}

TEST(CusparseSellRules, BoundsTheUnsortedLayoutAndUsesSellAlgorithmOne) {
  const CusparseSellRules rules;
  const MatrixFeatures f = features_of(five_by_five());
  const auto space = rules.candidates(f, testing::h100());
  ASSERT_EQ(space.size(), 2U);
  EXPECT_EQ(CusparseSellRules::params_of(space[0]).slice_height, 32U);
  EXPECT_EQ(CusparseSellRules::params_of(space[1]).slice_height, 64U);
  EXPECT_EQ(CusparseSellRules::params_of(space[0]).library_algorithm, 5U);  // SELL_ALG1
  const SellLayout<double> sell = make_sell_layout<double>(five_by_five(), 32, 1);
  EXPECT_GE(rules.device_bytes(f, Precision::fp64, space[0]),
            sell.slice_offsets.size() * 4 + sell.slots() * (4 + 8) +
                CusparseCsrRules::workspace_bound_bytes(5));
}

TEST(CusparseBsrRules, RejectsADiagonalWhoseBlocksWouldBeMostlyFill) {
  // Every row of length 1: at best b of a block's b^2 slots are used, fill-in >= b >= 2.
  const CusparseBsrRules rules;
  const MatrixFeatures diagonal = with_distribution(4000, {{1, 4000}});
  EXPECT_EQ(CusparseBsrRules::bsr_slot_lower_bound(diagonal, 2), 2 * 4000);
  EXPECT_FALSE(rules.admissible(diagonal, testing::h100(), Precision::fp64, ~std::uint64_t{0}));
}

TEST(CusparseBsrRules, AdmitsRowsLongEnoughToFillBlocks) {
  // 2x2 dense blocks on the diagonal: rows of length 2, b = 2 can store them without fill.
  const CusparseBsrRules rules;
  const MatrixFeatures blocks = with_distribution(4000, {{2, 4000}});
  EXPECT_EQ(CusparseBsrRules::bsr_slot_lower_bound(blocks, 2), 8000);
  EXPECT_TRUE(CusparseBsrRules::may_fill_acceptably(blocks, 2));
  EXPECT_FALSE(CusparseBsrRules::may_fill_acceptably(blocks, 4));  // >= 16 slots per 4 rows of 2
  EXPECT_TRUE(rules.admissible(blocks, testing::h100(), Precision::fp64, std::uint64_t{1} << 30));
  // Without counted blocks every block size stays a candidate (the bound is only necessary)...
  EXPECT_THAT(rules.candidates(blocks, testing::h100()),
              ElementsAre(Candidate{.format = kCusparseBsrFormatId,
                                    .params = FieldSet::of(
                                        CusparseBsrParams{.library_algorithm = 6, .block_dim = 2}),
                                    .launch = {}},
                          Candidate{.format = kCusparseBsrFormatId,
                                    .params = FieldSet::of(
                                        CusparseBsrParams{.library_algorithm = 6, .block_dim = 4}),
                                    .launch = {}}));
  // ...with them, only the block size that fills acceptably: 2000 full 2x2 blocks, staggered so
  // that they straddle 1500 4x4 tiles (24000 slots for 8000 entries).
  MatrixFeatures counted = blocks;
  counted.format_features["cusparse_bsr"] =
      FieldSet::of(CusparseBsrFeatures{.block_dims = {2, 4}, .blocks = {2000, 1500}});
  EXPECT_FALSE(CusparseBsrRules::may_fill_acceptably(counted, 4));
  EXPECT_THAT(rules.candidates(counted, testing::h100()),
              ElementsAre(Candidate{
                  .format = kCusparseBsrFormatId,
                  .params = FieldSet::of(CusparseBsrParams{.library_algorithm = 6, .block_dim = 2}),
                  .launch = {}}));
}

TEST(CusparseBsrRules, CountedBlocksDecideFillAndBytesExactly) {
  // 8 x 8: two dense 4x4 blocks on the diagonal (32 entries, rows of length 4).
  CsrMatrix<double> m{8, 8, {0}, {}, {}};
  for (std::int64_t r = 0; r < 8; ++r) {
    const std::int64_t first = r < 4 ? 0 : 4;
    for (std::int64_t c = first; c < first + 4; ++c) {
      m.col_indices.push_back(static_cast<ColIndex>(c));
      m.values.push_back(1.0);
    }
    m.row_offsets.push_back(static_cast<RowOffset>(m.col_indices.size()));
  }
  const MatrixFeatures f = features_of(m);
  EXPECT_THAT(bsr_block_count(f, 2), Optional(8));  // 4 per dense 4x4 block
  EXPECT_THAT(bsr_block_count(f, 4), Optional(2));
  const CusparseBsrRules rules;
  const std::vector<Candidate> space = rules.candidates(f, testing::h100());
  ASSERT_EQ(space.size(), 2u);  // both fill exactly (32 slots for 32 entries)
  // 2 blocks of 16 fp64 values, 2 + 1 block-row offsets and 2 block columns, no staging.
  EXPECT_EQ(rules.device_bytes(f, Precision::fp64, space[1]),
            (3 + 2) * sizeof(std::int32_t) + 2 * 16 * 8 +
                CusparseCsrRules::workspace_bound_bytes(8));
  // An off-diagonal entry adds a block at each size: 4x4 now stores 48 slots for 33 entries.
  m.col_indices.insert(m.col_indices.begin() + 4, 7);  // row 0: columns 0-3 and 7
  m.values.push_back(1.0);
  for (std::size_t r = 1; r < m.row_offsets.size(); ++r) ++m.row_offsets[r];
  const MatrixFeatures g = features_of(m);
  EXPECT_THAT(bsr_block_count(g, 2), Optional(9));
  EXPECT_THAT(bsr_block_count(g, 4), Optional(3));
  EXPECT_TRUE(CusparseBsrRules::may_fill_acceptably(g, 4));  // 48 <= 2 * 33
}

TEST(CusparseBsrRules, CountedBlocksRejectWhatTheBoundsWouldLetThrough) {
  // A random-looking pattern of rows of length 4 whose entries never share a 2x2 block:
  // the DF lower bound (one block per 2 entries of a row) admits b = 2, the count does not.
  CsrMatrix<double> m{8, 64, {0}, {}, {}};
  for (std::int64_t r = 0; r < 8; ++r) {
    for (std::int64_t j = 0; j < 4; ++j) {
      m.col_indices.push_back(static_cast<ColIndex>(16 * j + 2 * r % 16));
      m.values.push_back(1.0);
    }
    m.row_offsets.push_back(static_cast<RowOffset>(m.col_indices.size()));
  }
  MatrixFeatures f = features_of(m);
  EXPECT_THAT(bsr_block_count(f, 2), Optional(32));  // every entry its own block: 128 slots
  EXPECT_FALSE(CusparseBsrRules::may_fill_acceptably(f, 2));
  f.format_features.erase("cusparse_bsr");  // as features without BSR's own describe it
  EXPECT_TRUE(CusparseBsrRules::may_fill_acceptably(f, 2));
}

TEST(CusparseBsrRules, AdmitsAMatrixWithoutEntries) {
  const CusparseBsrRules rules;
  EXPECT_TRUE(rules.admissible(testing::features(1000, 1000, 0), testing::h100(), Precision::fp32,
                               std::uint64_t{1} << 30));
}

TEST(CusparseBsrRules, DeviceBytesBoundTheBuiltLayout) {
  const CusparseBsrRules rules;
  const MatrixFeatures f = features_of(five_by_five());
  EXPECT_EQ(CusparseBsrRules::bsr_block_upper_bound(f, 2), 8);  // min(2,3)+1+min(4,3)+0+2
  for (const std::uint32_t b : kBsrBlockDims) {
    SCOPED_TRACE(b);
    const BsrLayout<double> bsr = make_bsr_layout<double>(five_by_five(), b);
    const std::uint64_t padded = static_cast<std::uint64_t>(bsr.block_rows + bsr.block_cols) * b;
    const Candidate c{
        .format = kCusparseBsrFormatId,
        .params = FieldSet::of(CusparseBsrParams{.library_algorithm = 6, .block_dim = b}),
        .launch = {}};
    EXPECT_GE(rules.device_bytes(f, Precision::fp64, c),
              bsr.row_offsets.size() * 4 + bsr.col_indices.size() * 4 + bsr.values.size() * 8 +
                  padded * 8 + CusparseCsrRules::workspace_bound_bytes(5));
  }
}

TEST(CpuCooRules, OneCandidateSizedAsTheCooArrays) {
  const CpuCooRules rules;
  const MatrixFeatures f = features_of(five_by_five());
  const auto space = rules.candidates(f, testing::eight_core_cpu());
  ASSERT_EQ(space.size(), 1U);
  EXPECT_EQ(rules.device_bytes(f, Precision::fp64, space[0]), 9U * (4 + 4 + 8));
}

// A tridiagonal 6 x 6 (three diagonals, 16 entries) and the 5x5 above (offsets -2..2 and more).
CsrMatrix<double> tridiagonal_six() {
  CsrMatrix<double> m{6, 6, {0}, {}, {}};
  for (std::int64_t r = 0; r < 6; ++r) {
    for (std::int64_t c = std::max<std::int64_t>(r - 1, 0); c <= std::min<std::int64_t>(r + 1, 5); ++c) {
      m.col_indices.push_back(static_cast<ColIndex>(c));
      m.values.push_back(1.0 + static_cast<double>(r * 6 + c));
    }
    m.row_offsets.push_back(static_cast<RowOffset>(m.col_indices.size()));
  }
  return m;
}

TEST(CudaDiaRules, CountsTheOccupiedDiagonals) {
  EXPECT_EQ(compute_cuda_dia_features(tridiagonal_six()).diagonals, 3);
  // five_by_five: offsets 0, 2 (row 0), 0 (row 1), -2, -1, 1, 2 (row 2), -2, 0 (row 4).
  EXPECT_EQ(compute_cuda_dia_features(five_by_five()).diagonals, 5);
}

// Rows are counted in ranges side by side: a band across many ranges counts each diagonal
// once, and a matrix with more diagonals than counted gives the cap, however it is split.
TEST(CudaDiaRules, CountsDiagonalsAcrossRowRangesUpToTheCap) {
  const std::int64_t n = 100'000;  // several ranges of rows
  CsrMatrix<double> band{n, n, {0}, {}, {}};
  for (std::int64_t r = 0; r < n; ++r) {
    for (const std::int64_t d : {-300, -1, 0, 7}) {
      const std::int64_t c = r + d;
      if (c < 0 || c >= n) continue;
      band.col_indices.push_back(static_cast<ColIndex>(c));
      band.values.push_back(1.0);
    }
    band.row_offsets.push_back(static_cast<RowOffset>(band.col_indices.size()));
  }
  EXPECT_EQ(compute_cuda_dia_features(band).diagonals, 4);
  // Row r holds column (r * 37) mod n: a new offset almost every row, in every range.
  CsrMatrix<double> scattered{n, n, {0}, {}, {}};
  for (std::int64_t r = 0; r < n; ++r) {
    scattered.col_indices.push_back(static_cast<ColIndex>((r * 37) % n));
    scattered.values.push_back(1.0);
    scattered.row_offsets.push_back(static_cast<RowOffset>(r + 1));
  }
  EXPECT_EQ(compute_cuda_dia_features(scattered).diagonals, kDiaMaxDiagonals + 1);
}

TEST(CudaDiaRules, AdmitsAFewFullDiagonalsWithTheirExactBytes) {
  const MatrixFeatures f = features_of(tridiagonal_six());
  const CudaDiaRules rules;
  ASSERT_TRUE(rules.admissible(f, testing::h100(), Precision::fp64, 1 << 20));
  const std::vector<Candidate> all = rules.candidates(f, testing::h100());
  ASSERT_EQ(all.size(), kDiaBlockSizes.size());
  for (const Candidate& c : all) {
    EXPECT_TRUE(c.params.empty());
    // 3 diagonals x 6 rows of values + 3 offsets.
    EXPECT_EQ(rules.device_bytes(f, Precision::fp64, c), 3u * 6u * 8u + 3u * 4u);
    EXPECT_EQ(rules.device_bytes(f, Precision::fp32, c), 3u * 6u * 4u + 3u * 4u);
  }
}

TEST(CudaDiaRules, RejectsMoreSlotsThanTwiceTheNonZeros) {
  // 5 diagonals x 5 rows = 25 slots for 9 entries: more bytes than CSR moves.
  EXPECT_FALSE(CudaDiaRules{}.admissible(features_of(five_by_five()), testing::h100(), Precision::fp64,
                                         1 << 20));
}

TEST(CudaDiaRules, OffersNothingWithoutItsOwnFeatures) {
  MatrixFeatures f = features_of(tridiagonal_six());
  f.format_features.erase("cuda_dia");
  EXPECT_FALSE(CudaDiaRules{}.admissible(f, testing::h100(), Precision::fp64, 1 << 20));
  EXPECT_THAT(CudaDiaRules{}.candidates(f, testing::h100()), IsEmpty());
}

}  // namespace
}  // namespace spmvd
