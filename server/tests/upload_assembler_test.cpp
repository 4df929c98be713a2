#include "server/upload_assembler.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "core/error.hpp"

namespace spmvd {
namespace {

v1::UploadChunk csr_header(std::int64_t rows, std::int64_t cols, std::int64_t nnz) {
  v1::UploadChunk chunk;
  auto* h = chunk.mutable_header();
  h->set_encoding(v1::UploadHeader::CSR);
  h->set_precision(v1::FP64);
  h->set_rows(rows);
  h->set_cols(cols);
  h->set_nnz(nnz);
  return chunk;
}

v1::UploadChunk csr_part(std::vector<std::int64_t> offsets, std::vector<std::int32_t> cols,
                         std::vector<double> values) {
  v1::UploadChunk chunk;
  auto* c = chunk.mutable_csr();
  c->mutable_row_offsets()->Add(offsets.begin(), offsets.end());
  c->mutable_col_indices()->Add(cols.begin(), cols.end());
  c->mutable_values()->Add(values.begin(), values.end());
  return chunk;
}

// Expects `body` to throw Error(code) whose message contains `text`.
template <typename Body>
void expect_error(Body&& body, ErrorCode code, const std::string& text) {
  try {
    body();
    FAIL() << "expected an error containing '" << text << "'";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
  }
}

TEST(UploadAssembler, AssemblesCsrSentInSeveralChunks) {
  UploadAssembler a(1 << 20);
  a.add(csr_header(2, 3, 3));
  a.add(csr_part({0, 2}, {}, {}));
  a.add(csr_part({3}, {0, 2}, {1.0, 2.0}));
  a.add(csr_part({}, {1}, {3.0}));
  const UploadedMatrix m = a.finish();
  EXPECT_EQ(m.matrix.row_offsets, (std::vector<RowOffset>{0, 2, 3}));
  EXPECT_EQ(m.matrix.col_indices, (std::vector<ColIndex>{0, 2, 1}));
  EXPECT_EQ(m.matrix.values, (std::vector<double>{1.0, 2.0, 3.0}));
  EXPECT_EQ(m.precision, Precision::fp64);
}

TEST(UploadAssembler, CarriesTheExpectedMultipliesHint) {
  UploadAssembler a(1 << 20);
  auto header = csr_header(1, 1, 1);
  header.mutable_header()->set_expected_multiplies(250);
  a.add(header);
  a.add(csr_part({0, 1}, {0}, {1.0}));
  EXPECT_EQ(a.finish().expected_multiplies, 250u);
}

TEST(UploadAssembler, StreamCutOffHalfWayNamesWhatIsMissing) {
  UploadAssembler a(1 << 20);
  a.add(csr_header(2, 3, 3));
  a.add(csr_part({0, 2, 3}, {0}, {1.0}));
  expect_error([&] { a.finish(); }, ErrorCode::invalid_argument,
               "upload stream ended after 1 of 3 col_indices");
}

TEST(UploadAssembler, MoreEntriesThanDeclaredIsRefusedAtTheChunk) {
  UploadAssembler a(1 << 20);
  a.add(csr_header(1, 3, 1));
  expect_error([&] { a.add(csr_part({0, 1}, {0, 1}, {1.0, 2.0})); }, ErrorCode::invalid_argument,
               "upload chunk 1: col_indices would reach 2 entries, the header declares 1");
}

TEST(UploadAssembler, OutOfRangeColumnIsRefusedWithRowAndEntry) {
  UploadAssembler a(1 << 20);
  a.add(csr_header(2, 3, 2));
  a.add(csr_part({0, 1, 2}, {0, 7}, {1.0, 2.0}));
  expect_error([&] { a.finish(); }, ErrorCode::invalid_argument, "row 1: column index 7");
}

TEST(UploadAssembler, NanValueIsRefusedUnlessAllowed) {
  UploadAssembler a(1 << 20);
  a.add(csr_header(1, 1, 1));
  a.add(csr_part({0, 1}, {0}, {std::nan("")}));
  expect_error([&] { a.finish(); }, ErrorCode::invalid_argument, "not finite");

  UploadAssembler allowed(1 << 20);
  auto header = csr_header(1, 1, 1);
  header.mutable_header()->set_allow_non_finite(true);
  allowed.add(header);
  allowed.add(csr_part({0, 1}, {0}, {std::nan("")}));
  EXPECT_NO_THROW(allowed.finish());
}

TEST(UploadAssembler, OversizeUploadIsResourceExhausted) {
  UploadAssembler a(64);
  a.add(csr_header(100, 100, 1));
  expect_error([&] { a.add(csr_part(std::vector<std::int64_t>(50, std::int64_t{1} << 40), {}, {})); },
               ErrorCode::resource_exhausted, "exceeds max_upload_bytes (64 bytes)");
}

TEST(UploadAssembler, MissingOrRepeatedHeaderIsRefused) {
  UploadAssembler no_header(1 << 20);
  expect_error([&] { no_header.add(csr_part({0}, {}, {})); }, ErrorCode::invalid_argument,
               "CSR data before the header");
  UploadAssembler twice(1 << 20);
  twice.add(csr_header(1, 1, 0));
  expect_error([&] { twice.add(csr_header(1, 1, 0)); }, ErrorCode::invalid_argument,
               "a second header");
  UploadAssembler empty(1 << 20);
  expect_error([&] { empty.finish(); }, ErrorCode::invalid_argument, "before a header");
}

TEST(UploadAssembler, UnspecifiedPrecisionIsRefused) {
  UploadAssembler a(1 << 20);
  auto header = csr_header(1, 1, 0);
  header.mutable_header()->set_precision(v1::PRECISION_UNSPECIFIED);
  expect_error([&] { a.add(header); }, ErrorCode::invalid_argument, "precision must be FP32 or FP64");
}

TEST(UploadAssembler, ParsesMatrixMarketTextAcrossChunks) {
  UploadAssembler a(1 << 20);
  v1::UploadChunk header;
  header.mutable_header()->set_encoding(v1::UploadHeader::MATRIX_MARKET);
  header.mutable_header()->set_precision(v1::FP32);
  a.add(header);
  const std::string text =
      "%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 4.5\n2 2 -1\n";
  v1::UploadChunk part;
  part.set_matrix_market(text.substr(0, 30));
  a.add(part);
  part.set_matrix_market(text.substr(30));
  a.add(part);
  const UploadedMatrix m = a.finish();
  EXPECT_EQ(m.precision, Precision::fp32);
  EXPECT_EQ(m.matrix.values, (std::vector<double>{4.5, -1.0}));
}

TEST(UploadAssembler, MalformedMatrixMarketNamesTheLine) {
  UploadAssembler a(1 << 20);
  v1::UploadChunk header;
  header.mutable_header()->set_encoding(v1::UploadHeader::MATRIX_MARKET);
  header.mutable_header()->set_precision(v1::FP64);
  a.add(header);
  v1::UploadChunk part;
  part.set_matrix_market("%%MatrixMarket matrix coordinate real general\n2 2 1\n3 1 1.0\n");
  a.add(part);
  expect_error([&] { a.finish(); }, ErrorCode::invalid_argument, "line 3");
}

TEST(UploadAssembler, Fp32ValueThatOverflowsIsRefusedNamingTheEntry) {
  UploadAssembler a(1 << 20);
  auto header = csr_header(2, 3, 3);
  header.mutable_header()->set_precision(v1::FP32);
  a.add(header);
  a.add(csr_part({0, 1, 3}, {2, 0, 1}, {1.0, 2.0, 1e300}));
  expect_error([&] { a.finish(); }, ErrorCode::invalid_argument,
               "row 1, column 1: value 1e+300 overflows fp32 (largest finite 3.4028235e+38) (entry 2)");
}

TEST(UploadAssembler, Fp32OverflowIsRefusedEvenWhenNonFiniteValuesAreAllowed) {
  // allow_non_finite accepts NaN and Inf the client sent; 1e300 is a finite number that
  // would silently become Inf.
  UploadAssembler a(1 << 20);
  auto header = csr_header(1, 1, 1);
  header.mutable_header()->set_precision(v1::FP32);
  header.mutable_header()->set_allow_non_finite(true);
  a.add(header);
  a.add(csr_part({0, 1}, {0}, {-1e39}));
  expect_error([&] { a.finish(); }, ErrorCode::invalid_argument, "value -1e+39 overflows fp32");
}

TEST(UploadAssembler, Fp32OverflowInMatrixMarketTextIsRefused) {
  UploadAssembler a(1 << 20);
  v1::UploadChunk header;
  header.mutable_header()->set_encoding(v1::UploadHeader::MATRIX_MARKET);
  header.mutable_header()->set_precision(v1::FP32);
  a.add(header);
  v1::UploadChunk text;
  text.set_matrix_market("%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1.5\n2 2 1e300\n");
  a.add(text);
  expect_error([&] { a.finish(); }, ErrorCode::invalid_argument,
               "row 1, column 1: value 1e+300 overflows fp32");
}

TEST(UploadAssembler, Fp64KeepsValuesFp32CannotHold) {
  UploadAssembler a(1 << 20);
  a.add(csr_header(1, 1, 1));
  a.add(csr_part({0, 1}, {0}, {1e300}));
  EXPECT_EQ(a.finish().matrix.values[0], 1e300);
}

TEST(UploadAssembler, UnsortedCsrWithDuplicatesIsSortedAndSummed) {
  // [0 5 2]   sent as row 0: (2, 2.0) (1, 4.0) (1, 1.0)  -> (1, 5.0) (2, 2.0)
  // [7 0 0]   sent as row 1: (0, 7.0)
  UploadAssembler a(1 << 20);
  a.add(csr_header(2, 3, 4));
  a.add(csr_part({0, 3, 4}, {2, 1, 1, 0}, {2.0, 4.0, 1.0, 7.0}));
  const UploadedMatrix uploaded = a.finish();
  EXPECT_EQ(uploaded.matrix.row_offsets, (std::vector<std::int64_t>{0, 2, 3}));
  EXPECT_EQ(uploaded.matrix.col_indices, (std::vector<std::int32_t>{1, 2, 0}));
  EXPECT_EQ(uploaded.matrix.values, (std::vector<double>{5.0, 2.0, 7.0}));
  EXPECT_EQ(uploaded.normalized.rows_sorted, 1);
  EXPECT_EQ(uploaded.normalized.duplicates_summed, 1);
}

TEST(UploadAssembler, DuplicatesThatSumPastFp64AreRefused) {
  UploadAssembler a(1 << 20);
  a.add(csr_header(1, 1, 2));
  a.add(csr_part({0, 2}, {0, 0}, {1.5e308, 1.5e308}));
  expect_error([&] { a.finish(); }, ErrorCode::invalid_argument, "row 0, column 0: value is not finite");
}

TEST(UploadAssembler, UnsortedRowWithAnOutOfRangeColumnIsStillRefused) {
  UploadAssembler a(1 << 20);
  a.add(csr_header(1, 3, 2));
  a.add(csr_part({0, 2}, {2, 3}, {1.0, 1.0}));
  expect_error([&] { a.finish(); }, ErrorCode::invalid_argument, "row 0: column index 3");
}

}  // namespace
}  // namespace spmvd
