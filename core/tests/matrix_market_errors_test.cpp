// Every malformed Matrix Market input must fail with invalid_argument and a message that names
// the line and what is wrong: the text a user sees when their upload is refused.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "core/error.hpp"
#include "core/matrix_market.hpp"

namespace spmvd {
namespace {

using ::testing::HasSubstr;

struct MalformedCase {
  const char* name;
  std::string text;
  std::string message;  // expected substring of Error::what()
  std::int64_t max_nnz = std::int64_t{1} << 40;
};

const std::string kGeneral = "%%MatrixMarket matrix coordinate real general\n";
const std::string kSymmetric = "%%MatrixMarket matrix coordinate real symmetric\n";

std::vector<MalformedCase> malformed_cases() {
  return {
      {"EmptyText", "", "line 1: missing %%MatrixMarket banner"},
      {"BannerWithOnePercent", "%MatrixMarket matrix coordinate real general\n1 1 0\n",
       "line 1: missing %%MatrixMarket banner (found '%MatrixMarket')"},
      {"BannerMissingSymmetry", "%%MatrixMarket matrix coordinate real\n1 1 0\n",
       "line 1: banner has 3 words after %%MatrixMarket, expected 4"},
      {"BannerWithExtraWord", "%%MatrixMarket matrix coordinate real general extra\n1 1 0\n",
       "line 1: unexpected 'extra' after the banner's 4 words"},
      {"UnknownObject", "%%MatrixMarket vector coordinate real general\n1 1 0\n",
       "line 1: unknown object 'vector'"},
      {"DenseArrayFormat", "%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n",
       "line 1: the dense 'array' format is not supported"},
      {"UnknownFormat", "%%MatrixMarket matrix sparse real general\n1 1 0\n",
       "line 1: unknown format 'sparse'"},
      {"ComplexField", "%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 0\n",
       "line 1: the 'complex' field is not supported"},
      {"UnknownField", "%%MatrixMarket matrix coordinate quaternion general\n1 1 0\n",
       "line 1: unknown field 'quaternion'"},
      {"HermitianSymmetry", "%%MatrixMarket matrix coordinate real hermitian\n1 1 0\n",
       "line 1: 'hermitian' symmetry is not supported"},
      {"UnknownSymmetry", "%%MatrixMarket matrix coordinate real diagonal\n1 1 0\n",
       "line 1: unknown symmetry 'diagonal'"},
      {"PatternSkewSymmetric", "%%MatrixMarket matrix coordinate pattern skew-symmetric\n1 1 0\n",
       "line 1: 'pattern skew-symmetric' is not a valid combination"},
      {"MissingSizeLine", kGeneral + "% only a comment\n", "line 3: missing size line"},
      {"NonNumericSizeLine", kGeneral + "3 x 2\n", "line 2: columns 'x' is not an integer"},
      {"NegativeRowCount", kGeneral + "-3 3 1\n1 1 1\n", "line 2: negative number of rows -3"},
      {"SizeLineWithTwoNumbers", kGeneral + "3 3\n",
       "line 2: size line has 2 numbers, expected 3 (rows columns entries)"},
      {"SizeLineWithFourNumbers", kGeneral + "3 3 1 7\n1 1 1\n",
       "line 2: unexpected '7' after the size line's 3 numbers"},
      {"RowsAbove2To31", kGeneral + "3000000000 3 0\n",
       "line 2: 3000000000 rows exceeds the limit 2147483647 (2^31-1)"},
      {"ColumnsAbove2To31", kGeneral + "3 2147483648 0\n",
       "line 2: 2147483648 columns exceeds the limit 2147483647"},
      {"EntriesAboveMaxNnz", kGeneral + "3 3 5\n",
       "line 2: 5 entries declared, above the limit max_nnz = 2", 2},
      {"EntriesAboveRowsTimesCols", kGeneral + "2 2 5\n",
       "line 2: 5 entries declared, more than rows*cols = 4"},
      {"SymmetricNotSquare", kSymmetric + "3 4 1\n1 1 1\n",
       "line 2: symmetric matrix must be square, size line says 3 x 4"},
      {"TruncatedFile", kGeneral + "3 3 3\n1 1 1\n2 2 2\n",
       "line 5: file ends after 2 of 3 entries declared on the size line (line 2)"},
      {"MoreEntriesThanDeclared", kGeneral + "2 2 1\n1 1 1\n2 2 2\n",
       "line 4: more entries than the 1 declared on the size line (line 2)"},
      {"RowIndexZero", kGeneral + "3 5 1\n0 1 1\n", "line 3: row index 0 outside [1, 3]"},
      {"RowIndexAboveRows", kGeneral + "3 5 2\n1 1 1\n4 1 1\n",
       "line 4: row index 4 outside [1, 3]"},
      {"ColumnIndexAboveCols", kGeneral + "3 5 1\n1 7 1\n",
       "line 3: column index 7 outside [1, 5]"},
      {"RowIndexNotInteger", kGeneral + "3 3 1\n1.0 1 1\n",
       "line 3: row index '1.0' is not an integer"},
      {"MissingColumnIndex", kGeneral + "3 3 1\n1\n", "line 3: missing column index"},
      {"NonNumericValue", kGeneral + "3 3 1\n1 1 abc\n", "line 3: value 'abc' is not a number"},
      {"ValueWithTrailingGarbage", kGeneral + "3 3 1\n1 1 1.5x\n",
       "line 3: value '1.5x' is not a number"},
      {"MissingRealValue", kGeneral + "3 3 1\n1 1\n", "line 3: missing value"},
      {"MissingIntegerValue", "%%MatrixMarket matrix coordinate integer general\n3 3 1\n2 2 \n",
       "line 3: missing integer value"},
      {"FractionalIntegerValue",
       "%%MatrixMarket matrix coordinate integer general\n3 3 1\n2 2 1.5\n",
       "line 3: integer value '1.5' is not an integer"},
      {"ExtraTokenAfterRealEntry", kGeneral + "3 3 1\n1 1 1.0 9\n",
       "line 3: unexpected '9' after the entry"},
      {"ValueInPatternFile", "%%MatrixMarket matrix coordinate pattern general\n3 3 1\n1 1 1.0\n",
       "line 3: unexpected '1.0' after the entry"},
      {"NaNValue", kGeneral + "3 3 1\n1 1 nan\n", "line 3: value NaN is not finite"},
      {"InfValue", kGeneral + "3 3 2\n1 1 1\n2 2 -inf\n", "line 4: value Inf is not finite"},
      {"ValueOverflowingDouble", kGeneral + "3 3 1\n1 1 1e999\n",
       "line 3: value '1e999' is out of the double range"},
      {"UpperTriangleInSymmetricFile", kSymmetric + "3 3 2\n2 1 1\n1 2 1\n",
       "line 4: entry (1, 2) is above the diagonal; a symmetric file stores only the lower "
       "triangle"},
      {"DiagonalInSkewSymmetricFile",
       "%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 2\n2 1 1\n2 2 1\n",
       "line 4: diagonal entry (2, 2) in a skew-symmetric file"},
      {"LineNumbersCountCommentsAndBlankLines",
       kGeneral + "% c1\n\n3 3 2\n% c2\n1 1 1\n\n   \n3 9 1\n",
       "line 9: column index 9 outside [1, 3]"},
  };
}

void PrintTo(const MalformedCase& c, std::ostream* os) { *os << c.name; }

class MalformedMatrixMarket : public ::testing::TestWithParam<MalformedCase> {};

TEST_P(MalformedMatrixMarket, IsRejectedWithLineAndReason) {
  const MalformedCase& c = GetParam();
  MatrixMarketOptions options;
  options.max_nnz = c.max_nnz;
  try {
    read_matrix_market_text(c.text, options);
    FAIL() << "accepted malformed input; expected an error containing: " << c.message;
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument) << e.what();
    EXPECT_THAT(e.what(), HasSubstr(c.message));
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, MalformedMatrixMarket, ::testing::ValuesIn(malformed_cases()),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(MatrixMarketReader, AcceptsNonFiniteValuesWhenAllowed) {
  MatrixMarketOptions options;
  options.allow_non_finite = true;
  const auto m = read_matrix_market_text(kGeneral + "2 2 2\n1 1 nan\n2 2 -inf\n", options);
  ASSERT_EQ(m.nnz(), 2);
  EXPECT_TRUE(std::isnan(m.values[0]));
  EXPECT_EQ(m.values[1], -std::numeric_limits<double>::infinity());
}

TEST(MatrixMarketReader, ReportsAMissingFileAsNotFound) {
  const std::string path = "/nonexistent-spmvd-dir/matrix.mtx";
  for (const std::string& p : {path, path + ".gz"}) {
    try {
      read_matrix_market_file(p);
      FAIL() << "opened " << p;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::not_found);
      EXPECT_THAT(e.what(), HasSubstr("cannot open matrix file '" + p + "'"));
      EXPECT_THAT(e.what(), HasSubstr("No such file or directory"));
    }
  }
}

}  // namespace
}  // namespace spmvd
