// CSR invariants (validate) and the double-precision reference SpMV every kernel is checked
// against.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "core/csr_matrix.hpp"
#include "core/error.hpp"

namespace spmvd {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// [1 0 2]
// [0 3 0]
// [4 5 6]
CsrMatrix<double> three_by_three() {
  return CsrMatrix<double>{3, 3, {0, 2, 3, 6}, {0, 2, 1, 0, 1, 2}, {1, 2, 3, 4, 5, 6}};
}

void expect_invalid(const CsrMatrix<double>& m, const std::string& message) {
  try {
    validate(m);
    FAIL() << "accepted an invalid matrix; expected: " << message;
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    EXPECT_THAT(e.what(), HasSubstr(message));
  }
}

TEST(CsrValidate, AcceptsAWellFormedMatrix) { EXPECT_NO_THROW(validate(three_by_three())); }

TEST(CsrValidate, NamesAColumnIndexOutOfRange) {
  auto m = three_by_three();
  m.col_indices[4] = 3;
  expect_invalid(m, "row 2: column index 3 outside [0, ncols 3) (entry 4)");
}

TEST(CsrValidate, NamesANegativeColumnIndex) {
  auto m = three_by_three();
  m.col_indices[2] = -1;
  expect_invalid(m, "row 1: column index -1 outside [0, ncols 3) (entry 2)");
}

TEST(CsrValidate, NamesUnsortedColumns) {
  auto m = three_by_three();
  m.col_indices[3] = 1;
  m.col_indices[4] = 0;
  expect_invalid(m, "row 2: column indices not strictly increasing (1 then 0, entry 4)");
}

TEST(CsrValidate, NamesADuplicateColumn) {
  auto m = three_by_three();
  m.col_indices[4] = 0;
  expect_invalid(m, "row 2: column indices not strictly increasing (0 then 0, entry 4)");
}

TEST(CsrValidate, RejectsNaNUnlessAllowed) {
  auto m = three_by_three();
  m.values[5] = std::numeric_limits<double>::quiet_NaN();
  expect_invalid(m, "row 2, column 2: value is not finite (entry 5)");
  EXPECT_NO_THROW(validate(m, /*allow_non_finite=*/true));
}

TEST(CsrValidate, NamesDecreasingRowOffsets) {
  auto m = three_by_three();
  m.row_offsets = {0, 2, 1, 6};
  expect_invalid(m, "row 1: row_offsets decrease (2 then 1)");
}

TEST(CsrValidate, NamesAWrongNumberOfRowOffsets) {
  auto m = three_by_three();
  m.row_offsets.pop_back();
  expect_invalid(m, "row_offsets has 3 entries, expected rows+1 = 4");
}

TEST(CsrValidate, NamesANonZeroFirstOffset) {
  auto m = three_by_three();
  m.row_offsets[0] = 1;
  expect_invalid(m, "row_offsets[0] is 1, expected 0");
}

TEST(CsrValidate, NamesALastOffsetThatIsNotNnz) {
  auto m = three_by_three();
  m.row_offsets[3] = 5;
  expect_invalid(m, "row_offsets[rows] is 5, expected nnz 6");
}

TEST(CsrValidate, NamesMismatchedValueCount) {
  auto m = three_by_three();
  m.values.pop_back();
  expect_invalid(m, "values has 5 entries, col_indices has 6");
}

TEST(CsrValidate, AcceptsUnsortedColumnsWhenAnyOrderIsAsked) {
  CsrMatrix<double> m{1, 3, {0, 3}, {2, 0, 2}, {1, 2, 3}};
  EXPECT_NO_THROW(validate(m, false, ColumnOrder::any));
  m.col_indices[1] = 3;
  EXPECT_THROW(validate(m, false, ColumnOrder::any), Error) << "range is still checked";
}

TEST(CsrCheckValuesFit, NamesTheFp32OverflowWithRowColumnEntryAndValue) {
  const CsrMatrix<double> m{2, 2, {0, 1, 2}, {1, 0}, {2.5, 1e300}};
  try {
    check_values_fit(m, Precision::fp32);
    FAIL() << "1e300 accepted as fp32";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    EXPECT_THAT(e.what(), HasSubstr("row 1, column 0: value 1e+300 overflows fp32"));
    EXPECT_THAT(e.what(), HasSubstr("(entry 1)"));
  }
  EXPECT_NO_THROW(check_values_fit(m, Precision::fp64));
}

TEST(CsrCheckValuesFit, AcceptsTheLargestFp32AndLeavesNonFiniteToValidate) {
  const double largest = std::numeric_limits<float>::max();
  const CsrMatrix<double> m{1, 3, {0, 3}, {0, 1, 2},
                            {largest, -largest, std::numeric_limits<double>::infinity()}};
  EXPECT_NO_THROW(check_values_fit(m, Precision::fp32));
}

TEST(ReferenceSpmv, ComputesAlphaAxPlusBetaY) {
  const auto m = three_by_three();
  const std::vector<double> x{1, 2, 3};  // A x = [7, 6, 32]
  std::vector<double> y{1, 1, 1};
  reference_spmv(m, x.data(), y.data(), 2.0, 0.5);
  EXPECT_THAT(y, ElementsAre(14.5, 12.5, 64.5));
}

TEST(ReferenceSpmv, IgnoresNaNInYWhenBetaIsZero) {
  const auto m = three_by_three();
  const std::vector<double> x{1, 2, 3};
  std::vector<double> y(3, std::numeric_limits<double>::quiet_NaN());
  reference_spmv(m, x.data(), y.data(), 2.0, 0.0);
  EXPECT_THAT(y, ElementsAre(14.0, 12.0, 64.0));
}

TEST(ReferenceSpmv, AccumulatesFp32ValuesInDouble) {
  const auto m = convert_values<float>(three_by_three());
  const std::vector<double> x{1, 2, 3};
  std::vector<double> y(3);
  reference_spmv(m, x.data(), y.data(), 1.0, 0.0);
  EXPECT_THAT(y, ElementsAre(7.0, 6.0, 32.0));
}

}  // namespace
}  // namespace spmvd
