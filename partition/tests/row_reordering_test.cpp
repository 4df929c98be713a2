#include "partition/row_reordering.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <iostream>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "partition/tests/paper_000_example.hpp"

namespace spmvd {
namespace {

std::vector<std::int64_t> offsets_from_lengths(const std::vector<std::int64_t>& lengths) {
  std::vector<std::int64_t> offsets{0};
  for (const std::int64_t length : lengths) offsets.push_back(offsets.back() + length);
  return offsets;
}

TEST(RowReordering, PaperExampleGivesRowNoApAndAwOfSection6_2) {
  // Boundaries (M_1, M_2) = (2, 4); M_3 = M = 10 as in the paper, or the longest row, 7.
  for (const std::vector<std::int64_t>& bounds :
       {std::vector<std::int64_t>{2, 4, 10}, std::vector<std::int64_t>{2, 4, 7}}) {
    const BlockedRowOrder order = reorder_rows(testing::paper_000_row_offsets(), bounds);

    // rowNo = (1, 3, 4, 6, 10, 2, 7, 8, 5, 9), 1-based in the paper.
    EXPECT_EQ(order.row_order, (std::vector<std::int32_t>{0, 2, 3, 5, 9, 1, 6, 7, 4, 8}));
    EXPECT_EQ(order.block_row_offsets, (std::vector<std::int64_t>{0, 5, 8, 10}));  // Ap
    EXPECT_EQ(order.block_widths, (std::vector<std::int64_t>{2, 4, 7}));           // Aw
  }
}

TEST(RowReordering, BinarySearchFindsTheBlockOfEachLength) {
  const std::vector<std::int64_t> bounds{2, 4, 7};
  EXPECT_EQ(block_of_row_length(bounds, 1), 0);
  EXPECT_EQ(block_of_row_length(bounds, 2), 0);
  EXPECT_EQ(block_of_row_length(bounds, 3), 1);
  EXPECT_EQ(block_of_row_length(bounds, 4), 1);
  EXPECT_EQ(block_of_row_length(bounds, 5), 2);
  EXPECT_EQ(block_of_row_length(bounds, 7), 2);
  EXPECT_EQ(block_of_row_length(bounds, 8), 3);  // past M_k
}

TEST(RowReordering, EmptyRowsFollowTheLastBlock) {
  const BlockedRowOrder order =
      reorder_rows(offsets_from_lengths({0, 3, 1, 0, 2}), std::vector<std::int64_t>{1, 3});
  EXPECT_EQ(order.row_order, (std::vector<std::int32_t>{2, 1, 4, 0, 3}));
  EXPECT_EQ(order.block_row_offsets, (std::vector<std::int64_t>{0, 1, 3}));
  EXPECT_EQ(order.block_widths, (std::vector<std::int64_t>{1, 3}));
}

TEST(RowReordering, AMatrixOfNoRowsGivesAnEmptyOrder) {
  const BlockedRowOrder order = reorder_rows(std::vector<std::int64_t>{0}, {});
  EXPECT_TRUE(order.row_order.empty());
  EXPECT_EQ(order.block_row_offsets, std::vector<std::int64_t>{0});
  EXPECT_TRUE(order.block_widths.empty());
}

TEST(RowReordering, ABlockWithNoRowsHasWidthZero) {
  const BlockedRowOrder order =
      reorder_rows(offsets_from_lengths({5, 1}), std::vector<std::int64_t>{1, 3, 5});
  EXPECT_EQ(order.row_order, (std::vector<std::int32_t>{1, 0}));
  EXPECT_EQ(order.block_row_offsets, (std::vector<std::int64_t>{0, 1, 1, 2}));
  EXPECT_EQ(order.block_widths, (std::vector<std::int64_t>{1, 0, 5}));
}

TEST(RowReordering, IsAStablePermutationOnRandomRows) {
  for (const unsigned seed : {7u, 8u, 9u}) {
    std::cout << "seed " << seed << "\n";
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937_64 rng(seed);
    // Enough rows for many chunks of the parallel counting sort.
    std::vector<std::int64_t> lengths(500'000);
    for (std::int64_t& length : lengths) length = static_cast<std::int64_t>(rng() % 300);
    const std::vector<std::int64_t> bounds{3, 17, 40, 41, 120, 299};
    const BlockedRowOrder order = reorder_rows(offsets_from_lengths(lengths), bounds);

    // A permutation.
    std::vector<std::int32_t> sorted = order.row_order;
    std::sort(sorted.begin(), sorted.end());
    std::vector<std::int32_t> identity(lengths.size());
    std::iota(identity.begin(), identity.end(), 0);
    ASSERT_EQ(sorted, identity);

    // The same as a serial stable sort by block, empty rows last.
    const auto bucket = [&](std::int32_t r) {
      return lengths[r] == 0 ? static_cast<std::int64_t>(bounds.size())
                             : block_of_row_length(bounds, lengths[r]);
    };
    std::vector<std::int32_t> expected = identity;
    std::stable_sort(expected.begin(), expected.end(),
                     [&](std::int32_t a, std::int32_t b) { return bucket(a) < bucket(b); });
    EXPECT_EQ(order.row_order, expected);

    // Every row lies in its block's range and within its width.
    for (std::size_t j = 0; j < bounds.size(); ++j) {
      for (std::int64_t p = order.block_row_offsets[j]; p < order.block_row_offsets[j + 1]; ++p) {
        const std::int64_t length = lengths[order.row_order[p]];
        ASSERT_EQ(bucket(order.row_order[p]), static_cast<std::int64_t>(j));
        ASSERT_LE(length, order.block_widths[j]);
      }
    }
  }
}

TEST(RowReordering, LongRowsFindTheirBlocksPastTheLookupTable) {
  // Lengths either side of 4096, where the reordering stops looking lengths up in a table and
  // searches the boundaries.
  const std::vector<std::int64_t> lengths{4097, 1, 4095, 4096, 100000, 4094, 5000, 0, 4100};
  const std::vector<std::int64_t> bounds{1, 4095, 4096, 5000, 100000};
  std::vector<std::int64_t> offsets{0};
  for (const std::int64_t length : lengths) offsets.push_back(offsets.back() + length);
  const BlockedRowOrder order = reorder_rows(offsets, bounds);
  EXPECT_EQ(order.row_order, (std::vector<std::int32_t>{1, 2, 5, 3, 0, 6, 8, 4, 7}));
  EXPECT_EQ(order.block_row_offsets, (std::vector<std::int64_t>{0, 1, 3, 4, 7, 8}));
  EXPECT_EQ(order.block_widths, (std::vector<std::int64_t>{1, 4095, 4096, 5000, 100000}));
}

TEST(RowReordering, MoreBlocksThanSixteenBitBucketsStillSortStably) {
  // 70000 blocks, one per length: past what the reordering keeps per row between its passes.
  std::mt19937_64 rng(11);
  std::cout << "seed 11\n";
  std::vector<std::int64_t> bounds(70000);
  std::iota(bounds.begin(), bounds.end(), 1);
  std::vector<std::int64_t> lengths(2000);
  for (std::int64_t& length : lengths) length = static_cast<std::int64_t>(rng() % 70001);
  std::vector<std::int64_t> offsets{0};
  for (const std::int64_t length : lengths) offsets.push_back(offsets.back() + length);

  const BlockedRowOrder order = reorder_rows(offsets, bounds);
  std::vector<std::int32_t> expected(lengths.size());
  std::iota(expected.begin(), expected.end(), 0);
  // Ascending length, empty rows last, ties in original order.
  std::stable_sort(expected.begin(), expected.end(), [&](std::int32_t a, std::int32_t b) {
    const auto key = [&](std::int32_t r) { return lengths[r] == 0 ? 70001 : lengths[r]; };
    return key(a) < key(b);
  });
  EXPECT_EQ(order.row_order, expected);
}

TEST(RowReordering, RefusesARowLongerThanTheLastBoundary) {
  try {
    reorder_rows(testing::paper_000_row_offsets(), std::vector<std::int64_t>{2, 4, 6});
    FAIL() << "expected Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    EXPECT_STREQ(e.what(), "reorder_rows: row 4 has length 7, above the last boundary M_k = 6");
  }
}

TEST(RowReordering, RefusesBoundariesOutOfOrder) {
  try {
    reorder_rows(testing::paper_000_row_offsets(), std::vector<std::int64_t>{4, 4, 10});
    FAIL() << "expected Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    EXPECT_STREQ(e.what(),
                 "reorder_rows: boundary M_2 = 4 must be positive and above the one before");
  }
}

}  // namespace
}  // namespace spmvd
