// Matrix Market reading and writing on hand-checkable inputs, gzip files and real matrices.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "core/csr_matrix.hpp"
#include "core/error.hpp"
#include "core/matrix_market.hpp"

namespace spmvd {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
namespace fs = std::filesystem;

// A fresh directory per test, removed afterwards.
class TempDir {
 public:
  TempDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = fs::temp_directory_path() /
            ("spmvd-core-" + std::to_string(::getpid()) + "-" + info->name());
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  fs::path path_;
};

void write_gzip(const std::string& path, const std::string& text) {
  gzFile f = gzopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr) << path;
  ASSERT_EQ(gzwrite(f, text.data(), static_cast<unsigned>(text.size())),
            static_cast<int>(text.size()));
  ASSERT_EQ(gzclose(f), Z_OK);
}

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out << bytes;
}

// Bit-exact equality of two matrices (values compared as bytes, so -0.0 != 0.0 and NaN == NaN).
void expect_identical(const CsrMatrix<double>& a, const CsrMatrix<double>& b) {
  EXPECT_EQ(a.rows, b.rows);
  EXPECT_EQ(a.cols, b.cols);
  EXPECT_EQ(a.row_offsets, b.row_offsets);
  EXPECT_EQ(a.col_indices, b.col_indices);
  ASSERT_EQ(a.values.size(), b.values.size());
  EXPECT_EQ(std::memcmp(a.values.data(), b.values.data(), a.values.size() * sizeof(double)), 0);
}

TEST(MatrixMarketReader, ExpandsSymmetricLowerTriangle) {
  // Stored:         Full matrix:
  //  2               [ 2  -1   0  .5]
  // -1  .  .         [-1   0   3   0]
  //  .  3  .         [ 0   3   0   0]
  // .5  .  .  4      [.5   0   0   4]
  const auto m = read_matrix_market_text(
      "%%MatrixMarket matrix coordinate real symmetric\n"
      "4 4 5\n"
      "1 1 2.0\n"
      "2 1 -1.0\n"
      "3 2 3.0\n"
      "4 1 0.5\n"
      "4 4 4.0\n");
  EXPECT_EQ(m.rows, 4);
  EXPECT_EQ(m.cols, 4);
  EXPECT_THAT(m.row_offsets, ElementsAre(0, 3, 5, 6, 8));
  EXPECT_THAT(m.col_indices, ElementsAre(0, 1, 3, 0, 2, 1, 0, 3));
  EXPECT_THAT(m.values, ElementsAre(2.0, -1.0, 0.5, -1.0, 3.0, 3.0, 0.5, 4.0));
  EXPECT_NO_THROW(validate(m));
}

TEST(MatrixMarketReader, ExpandsSkewSymmetricWithNegatedMirror) {
  // a(2,1) = 1.5, a(4,2) = -2, a(3,1) = 7 (1-based); a(j,i) = -a(i,j).
  const auto m = read_matrix_market_text(
      "%%MatrixMarket matrix coordinate real skew-symmetric\n"
      "4 4 3\n"
      "2 1 1.5\n"
      "4 2 -2.0\n"
      "3 1 7.0\n");
  EXPECT_THAT(m.row_offsets, ElementsAre(0, 2, 4, 5, 6));
  EXPECT_THAT(m.col_indices, ElementsAre(1, 2, 0, 3, 0, 1));
  EXPECT_THAT(m.values, ElementsAre(-1.5, -7.0, 1.5, 2.0, 7.0, -2.0));
}

TEST(MatrixMarketReader, ReadsPatternAsOnesWithEmptyRowsAndNonSquareShape) {
  const auto m = read_matrix_market_text(
      "%%MatrixMarket matrix coordinate pattern general\n"
      "% a comment before the size line\n"
      "3 4 3\n"
      "\n"
      "1 4\n"
      "3 1\n"
      "3 2\n");
  EXPECT_EQ(m.rows, 3);
  EXPECT_EQ(m.cols, 4);
  EXPECT_THAT(m.row_offsets, ElementsAre(0, 1, 1, 3));
  EXPECT_THAT(m.col_indices, ElementsAre(3, 0, 1));
  EXPECT_THAT(m.values, ElementsAre(1.0, 1.0, 1.0));
}

TEST(MatrixMarketReader, MirrorsPatternSymmetricAsOnes) {
  const auto m = read_matrix_market_text(
      "%%MatrixMarket matrix coordinate pattern symmetric\n3 3 2\n2 1\n3 3\n");
  EXPECT_THAT(m.row_offsets, ElementsAre(0, 1, 2, 3));
  EXPECT_THAT(m.col_indices, ElementsAre(1, 0, 2));
  EXPECT_THAT(m.values, ElementsAre(1.0, 1.0, 1.0));
}

TEST(MatrixMarketReader, ReadsIntegerValues) {
  const auto m = read_matrix_market_text(
      "%%MatrixMarket matrix coordinate integer general\n2 2 3\n1 2 -7\n2 1 12\n2 2 +3\n");
  EXPECT_THAT(m.col_indices, ElementsAre(1, 0, 1));
  EXPECT_THAT(m.values, ElementsAre(-7.0, 12.0, 3.0));
}

TEST(MatrixMarketReader, SumsDuplicatesAndSortsEachRow) {
  const auto m = read_matrix_market_text(
      "%%MatrixMarket matrix coordinate real general\n"
      "2 3 5\n"
      "1 3 1.0\n"
      "1 1 2.0\n"
      "1 3 0.25\n"
      "2 2 5.0\n"
      "1 1 -2.0\n");
  EXPECT_THAT(m.row_offsets, ElementsAre(0, 2, 3));
  EXPECT_THAT(m.col_indices, ElementsAre(0, 2, 1));
  // 2 + (-2) is kept as an explicit zero: the structure is what the file declares.
  EXPECT_THAT(m.values, ElementsAre(0.0, 1.25, 5.0));
}

TEST(MatrixMarketReader, ConvertsOneBasedCornersToZeroBased) {
  const auto m = read_matrix_market_text(
      "%%MatrixMarket matrix coordinate real general\n5 7 2\n5 7 9.5\n1 1 -1\n");
  EXPECT_THAT(m.row_offsets, ElementsAre(0, 1, 1, 1, 1, 2));
  EXPECT_THAT(m.col_indices, ElementsAre(0, 6));
  EXPECT_THAT(m.values, ElementsAre(-1.0, 9.5));
}

TEST(MatrixMarketReader, ToleratesCrlfTabsCaseAndFortranExponents) {
  const auto m = read_matrix_market_text(
      "%%MatrixMarket MATRIX Coordinate Real General\r\n"
      "2 2 3\r\n"
      "1\t1\t1.5D+01\r\n"
      "  % indented comment\r\n"
      "2 1 +.5\r\n"
      "2 2 -2e-3   \r\n");
  EXPECT_THAT(m.col_indices, ElementsAre(0, 0, 1));
  EXPECT_THAT(m.values, ElementsAre(15.0, 0.5, -2e-3));
}

TEST(MatrixMarketReader, RoundsUnderflowingValuesToZero) {
  const auto m = read_matrix_market_text(
      "%%MatrixMarket matrix coordinate real general\n1 2 2\n1 1 1e-400\n1 2 -2.5e-999\n");
  ASSERT_EQ(m.nnz(), 2);
  EXPECT_EQ(m.values[0], 0.0);
  EXPECT_EQ(m.values[1], 0.0);
  EXPECT_TRUE(std::signbit(m.values[1]));
}

TEST(MatrixMarketReader, ReadsAnEmptyMatrix) {
  const auto m = read_matrix_market_text("%%MatrixMarket matrix coordinate real general\n0 0 0\n");
  EXPECT_EQ(m.rows, 0);
  EXPECT_EQ(m.cols, 0);
  EXPECT_THAT(m.row_offsets, ElementsAre(0));
  EXPECT_EQ(m.nnz(), 0);
}

TEST(MatrixMarketReader, ReadsFromAStream) {
  std::istringstream in("%%MatrixMarket matrix coordinate real general\n2 2 1\n2 1 3.25\n");
  const auto m = read_matrix_market(in);
  EXPECT_THAT(m.row_offsets, ElementsAre(0, 0, 1));
  EXPECT_THAT(m.values, ElementsAre(3.25));
}

const std::string kSmallText =
    "%%MatrixMarket matrix coordinate real symmetric\n"
    "% gzip test\n"
    "4 4 5\n1 1 2.0\n2 1 -1.0\n3 2 3.0\n4 1 0.5\n4 4 4.0\n";

TEST(MatrixMarketReader, ReadsGzipFilesDirectly) {
  TempDir dir;
  const std::string path = dir.file("small.mtx.gz");
  write_gzip(path, kSmallText);
  expect_identical(read_matrix_market_file(path), read_matrix_market_text(kSmallText));
}

TEST(MatrixMarketReader, ReadsPlainFiles) {
  TempDir dir;
  const std::string path = dir.file("small.mtx");
  write_bytes(path, kSmallText);
  expect_identical(read_matrix_market_file(path), read_matrix_market_text(kSmallText));
}

TEST(MatrixMarketReader, PrefixesParseErrorsWithTheFilePath) {
  TempDir dir;
  const std::string path = dir.file("bad.mtx");
  write_bytes(path, "%%MatrixMarket matrix coordinate real general\n2 2 1\n3 1 1\n");
  try {
    read_matrix_market_file(path);
    FAIL() << "accepted an out-of-range row";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    EXPECT_THAT(e.what(), HasSubstr(path + ": line 3: row index 3 outside [1, 2]"));
  }
}

// A text long enough that its gzip stream spans many deflate blocks.
std::string large_text() {
  std::string text = "%%MatrixMarket matrix coordinate real general\n1000 1000 20000\n";
  for (int k = 0; k < 20000; ++k)
    text += std::to_string(k % 1000 + 1) + " " + std::to_string((k * 7919) % 1000 + 1) + " " +
            std::to_string(k * 0.001) + "\n";
  return text;
}

void expect_gzip_rejected(const std::string& path, const std::string& message) {
  try {
    read_matrix_market_file(path);
    FAIL() << "accepted a damaged gzip file";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    EXPECT_THAT(e.what(), HasSubstr("'" + path + "': " + message));
  }
}

TEST(MatrixMarketReader, RejectsTruncatedGzip) {
  TempDir dir;
  const std::string whole = dir.file("whole.mtx.gz"), cut = dir.file("cut.mtx.gz");
  write_gzip(whole, large_text());
  const std::string bytes = read_bytes(whole);
  write_bytes(cut, bytes.substr(0, bytes.size() / 2));
  expect_gzip_rejected(cut, "gzip stream is truncated or corrupt (unexpected end of file)");
}

TEST(MatrixMarketReader, RejectsGzipWithAnInvalidDeflateBlock) {
  TempDir dir;
  const std::string whole = dir.file("whole.mtx.gz"), bad = dir.file("bad.mtx.gz");
  write_gzip(whole, large_text());
  std::string bytes = read_bytes(whole);
  // The first deflate block header follows the 10-byte gzip header; BTYPE = 11 is reserved.
  bytes[10] = '\x07';
  write_bytes(bad, bytes);
  expect_gzip_rejected(bad, "gzip data is corrupt (invalid block type)");
}

TEST(MatrixMarketReader, RejectsGzipWithABadChecksum) {
  TempDir dir;
  const std::string whole = dir.file("whole.mtx.gz"), bad = dir.file("bad.mtx.gz");
  write_gzip(whole, large_text());
  std::string bytes = read_bytes(whole);
  bytes[bytes.size() - 8] = static_cast<char>(bytes[bytes.size() - 8] ^ 0x01);  // CRC-32 trailer
  write_bytes(bad, bytes);
  expect_gzip_rejected(bad, "gzip data is corrupt (incorrect data check)");
}

TEST(MatrixMarketWriter, WritesOneBasedCoordinateRealGeneral) {
  CsrMatrix<double> m{2, 3, {0, 2, 3}, {0, 2, 1}, {0.1, -2.0, 2.0 / 3.0}};
  std::ostringstream out;
  write_matrix_market(out, m);
  EXPECT_EQ(out.str(),
            "%%MatrixMarket matrix coordinate real general\n"
            "2 3 3\n"
            "1 1 0.10000000000000001\n"
            "1 3 -2\n"
            "2 2 0.66666666666666663\n");
}

CsrMatrix<double> awkward_values_matrix() {
  // Values that only survive a text round trip with 17 significant digits.
  return CsrMatrix<double>{
      3, 4, {0, 3, 3, 6}, {0, 1, 3, 0, 2, 3},
      {1.0 / 3.0, -0.0, std::numeric_limits<double>::denorm_min(),
       std::numeric_limits<double>::max(), -2.2250738585072014e-308, 0.1 + 0.2}};
}

TEST(MatrixMarketWriter, RoundTripsBitExactlyThroughText) {
  const auto m = awkward_values_matrix();
  std::ostringstream out;
  write_matrix_market(out, m);
  expect_identical(read_matrix_market_text(out.str()), m);
}

TEST(MatrixMarketWriter, RoundTripsBitExactlyThroughPlainAndGzipFiles) {
  TempDir dir;
  const auto m = awkward_values_matrix();
  for (const std::string name : {"m.mtx", "m.mtx.gz"}) {
    SCOPED_TRACE(name);
    const std::string path = dir.file(name);
    write_matrix_market_file(path, m);
    expect_identical(read_matrix_market_file(path), m);
  }
  // The .gz file really is gzip (magic bytes 1f 8b), the plain one is text.
  EXPECT_EQ(read_bytes(dir.file("m.mtx.gz")).substr(0, 2), "\x1f\x8b");
  EXPECT_EQ(read_bytes(dir.file("m.mtx")).substr(0, 14), "%%MatrixMarket");
}

TEST(MatrixMarketWriter, RefusesAnInvalidMatrix) {
  CsrMatrix<double> m{2, 2, {0, 1, 2}, {0, 5}, {1.0, 2.0}};
  std::ostringstream out;
  try {
    write_matrix_market(out, m);
    FAIL() << "wrote a matrix with a column index out of range";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    EXPECT_THAT(e.what(), HasSubstr("row 1: column index 5 outside [0, ncols 2)"));
  }
}

// One row of /work/shared/matrices/README.md.
struct RealMatrix {
  const char* file;
  std::int64_t rows, cols, nnz, empty_rows, max_row_length;
};

void PrintTo(const RealMatrix& m, std::ostream* os) { *os << m.file; }

class SharedMatrix : public ::testing::TestWithParam<RealMatrix> {};

TEST_P(SharedMatrix, MatchesTheReadmeDimensionsAndRowStatistics) {
  const RealMatrix& expected = GetParam();
  const std::string path = std::string(SPMVD_SHARED_MATRICES_DIR) + "/" + expected.file;
  if (!fs::exists(path)) GTEST_SKIP() << "shared matrix not present: " << path;
  const auto m = read_matrix_market_file(path);
  EXPECT_EQ(m.rows, expected.rows);
  EXPECT_EQ(m.cols, expected.cols);
  EXPECT_EQ(m.nnz(), expected.nnz);
  std::int64_t empty = 0, longest = 0;
  for (std::int64_t r = 0; r < m.rows; ++r) {
    empty += m.row_length(r) == 0;
    longest = std::max(longest, m.row_length(r));
  }
  EXPECT_EQ(empty, expected.empty_rows);
  EXPECT_EQ(longest, expected.max_row_length);
  EXPECT_NO_THROW(validate(m));
}

INSTANTIATE_TEST_SUITE_P(
    Readme, SharedMatrix,
    ::testing::Values(RealMatrix{"gre_1107.mtx.gz", 1107, 1107, 5664, 0, 7},          // real general
                      RealMatrix{"bcsstk16.mtx.gz", 4884, 4884, 290378, 0, 81},       // real symmetric
                      RealMatrix{"power_nk.mtx.gz", 4941, 4941, 13188, 0, 19},        // pattern symmetric
                      RealMatrix{"wiki-Vote.mtx.gz", 8297, 8297, 103689, 2187, 893},  // pattern, empty rows
                      RealMatrix{"Franz6_id1959_aug.mtx.gz", 10592, 3016, 48472, 0, 6}),  // integer, 3.5:1
    [](const auto& info) {
      std::string name = info.param.file;
      name = name.substr(0, name.find('.'));
      for (char& c : name)
        if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
      return name;
    });

}  // namespace
}  // namespace spmvd
