// The structural fingerprint keys the plan cache: it must change with any structural change,
// ignore values and precision, and never drift between builds (a pinned value catches that).

#include <gtest/gtest.h>
#include <xxhash.h>

#include <cstring>
#include <vector>

#include "core/csr_matrix.hpp"
#include "core/fingerprint.hpp"

namespace spmvd {
namespace {

// [1 0 2 0]
// [0 0 0 0]
// [0 3 0 4]
CsrMatrix<double> tiny() { return CsrMatrix<double>{3, 4, {0, 2, 2, 4}, {0, 2, 1, 3}, {1, 2, 3, 4}}; }

TEST(Fingerprint, HexIsHighWordFirstInLowercase) {
  EXPECT_EQ((Fingerprint{0x0123456789abcdefULL, 0xfedcba9876543210ULL}.hex()),
            "0123456789abcdeffedcba9876543210");
  EXPECT_EQ(Fingerprint{}.hex(), std::string(32, '0'));
}

TEST(Fingerprint, MatchesThePinnedValueOfATinyMatrix) {
  // Pinned when the fingerprint was written (XXH3-128 over rows, cols, the two array lengths,
  // row_offsets, col_indices). A change here invalidates every stored plan: bump the plan cache
  // schema instead of re-pinning casually.
  EXPECT_EQ(structural_fingerprint(tiny()).hex(), "39bae16e459c0aa2d51862c8ef34a88e");
}

TEST(Fingerprint, EqualsOneShotXxh3OverTheDocumentedByteLayout) {
  // rows, cols, row_offsets.size(), col_indices.size() as int64, then the two arrays' bytes.
  const auto m = tiny();
  const std::int64_t header[4] = {3, 4, 4, 4};
  std::vector<unsigned char> bytes(sizeof header + 4 * sizeof(RowOffset) + 4 * sizeof(ColIndex));
  std::memcpy(bytes.data(), header, sizeof header);
  std::memcpy(bytes.data() + sizeof header, m.row_offsets.data(), 4 * sizeof(RowOffset));
  std::memcpy(bytes.data() + sizeof header + 4 * sizeof(RowOffset), m.col_indices.data(),
              4 * sizeof(ColIndex));
  const XXH128_hash_t expected = XXH3_128bits(bytes.data(), bytes.size());
  EXPECT_EQ(structural_fingerprint(m), (Fingerprint{expected.high64, expected.low64}));
}

TEST(Fingerprint, IgnoresValues) {
  auto other = tiny();
  other.values = {-5, 0, 1e300, 7};
  EXPECT_EQ(structural_fingerprint(other), structural_fingerprint(tiny()));
}

TEST(Fingerprint, IsTheSameForFp32AndFp64Copies) {
  EXPECT_EQ(structural_fingerprint(convert_values<float>(tiny())), structural_fingerprint(tiny()));
}

TEST(Fingerprint, ChangesWhenOneColumnIndexChanges) {
  auto other = tiny();
  other.col_indices[3] = 2;
  EXPECT_NE(structural_fingerprint(other), structural_fingerprint(tiny()));
}

TEST(Fingerprint, ChangesWhenOneRowOffsetChanges) {
  auto other = tiny();
  other.row_offsets[1] = 1;  // entry (0,2) moves to row 1: same columns, different rows
  EXPECT_NE(structural_fingerprint(other), structural_fingerprint(tiny()));
}

TEST(Fingerprint, ChangesWithTheRowCount) {
  auto other = tiny();
  other.rows = 4;  // one more, empty, row
  other.row_offsets.push_back(4);
  EXPECT_NE(structural_fingerprint(other), structural_fingerprint(tiny()));
}

TEST(Fingerprint, ChangesWithTheColumnCount) {
  auto other = tiny();
  other.cols = 5;
  EXPECT_NE(structural_fingerprint(other), structural_fingerprint(tiny()));
}

TEST(Fingerprint, DistinguishesEmptyMatricesBySize) {
  CsrMatrix<double> a, b;
  b.rows = 1;
  b.row_offsets = {0, 0};
  EXPECT_NE(structural_fingerprint(a), structural_fingerprint(b));
  EXPECT_EQ(structural_fingerprint(a), structural_fingerprint(CsrMatrix<double>{}));
}

}  // namespace
}  // namespace spmvd
