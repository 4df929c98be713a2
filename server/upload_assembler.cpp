#include "server/upload_assembler.hpp"

#include "core/csr_normalize.hpp"
#include "core/error.hpp"
#include "core/gzip.hpp"
#include "core/matrix_market.hpp"

namespace spmvd {
namespace {

using std::to_string;

Precision decode_precision(v1::Precision p) {
  switch (p) {
    case v1::FP32: return Precision::fp32;
    case v1::FP64: return Precision::fp64;
    default:
      throw_invalid("upload header: precision must be FP32 or FP64 (got " + to_string(p) + ")");
  }
}

}  // namespace

std::string UploadAssembler::where() const { return "upload chunk " + to_string(chunk_index_); }

void UploadAssembler::add(const v1::UploadChunk& chunk) {
  received_bytes_ += chunk.ByteSizeLong();
  if (received_bytes_ > max_upload_bytes_)
    throw Error(ErrorCode::resource_exhausted,
                where() + ": upload exceeds max_upload_bytes (" + to_string(max_upload_bytes_) +
                    " bytes)");
  switch (chunk.part_case()) {
    case v1::UploadChunk::kHeader:
      if (started_) throw_invalid(where() + ": a second header; the header must come once, first");
      start(chunk.header());
      break;
    case v1::UploadChunk::kCsr:
      if (!started_) throw_invalid(where() + ": CSR data before the header");
      add_csr(chunk.csr());
      break;
    case v1::UploadChunk::kMatrixMarket:
      if (!started_) throw_invalid(where() + ": Matrix Market data before the header");
      add_text(chunk.matrix_market());
      break;
    default: throw_invalid(where() + ": empty chunk (no header, csr or matrix_market part)");
  }
  ++chunk_index_;
}

void UploadAssembler::start(const v1::UploadHeader& header) {
  header_ = header;
  started_ = true;
  result_.precision = decode_precision(header.precision());
  result_.name = header.name();
  result_.expected_multiplies = header.expected_multiplies();
  if (header.encoding() == v1::UploadHeader::CSR) {
    const std::int64_t rows = header.rows(), cols = header.cols(), nnz = header.nnz();
    if (rows < 0 || cols < 0 || rows > kMaxDimension || cols > kMaxDimension)
      throw_invalid("upload header: dimensions " + to_string(rows) + " x " + to_string(cols) +
                    " outside [0, 2^31-1]");
    if (nnz < 0) throw_invalid("upload header: nnz " + to_string(nnz) + " is negative");
    // 12 bytes per entry is the least CSR can take on the wire (int32 column + double value).
    if (static_cast<std::uint64_t>(nnz) > max_upload_bytes_ / 12)
      throw Error(ErrorCode::resource_exhausted,
                  "upload header: nnz " + to_string(nnz) + " cannot fit in max_upload_bytes (" +
                      to_string(max_upload_bytes_) + ")");
    // No nnz <= rows*cols check: repeated entries are summed (CsrChunk), so a row may carry
    // more entries than it has columns. The byte limit above bounds the memory.
    result_.matrix.rows = rows;
    result_.matrix.cols = cols;
    result_.matrix.row_offsets.clear();
    result_.matrix.row_offsets.reserve(static_cast<std::size_t>(rows + 1));
    result_.matrix.col_indices.reserve(static_cast<std::size_t>(nnz));
    result_.matrix.values.reserve(static_cast<std::size_t>(nnz));
  } else if (header.encoding() != v1::UploadHeader::MATRIX_MARKET) {
    throw_invalid("upload header: encoding must be CSR or MATRIX_MARKET");
  }
}

void UploadAssembler::add_csr(const v1::CsrChunk& csr) {
  if (header_.encoding() != v1::UploadHeader::CSR)
    throw_invalid(where() + ": CSR data in a MATRIX_MARKET upload");
  auto& m = result_.matrix;
  const auto expect = [&](const char* array, std::size_t have, std::size_t adding,
                          std::int64_t declared) {
    if (have + adding > static_cast<std::size_t>(declared))
      throw_invalid(where() + ": " + array + " would reach " + to_string(have + adding) +
                    " entries, the header declares " + to_string(declared));
  };
  expect("row_offsets", m.row_offsets.size(), csr.row_offsets_size(), header_.rows() + 1);
  expect("col_indices", m.col_indices.size(), csr.col_indices_size(), header_.nnz());
  expect("values", m.values.size(), csr.values_size(), header_.nnz());
  m.row_offsets.insert(m.row_offsets.end(), csr.row_offsets().begin(), csr.row_offsets().end());
  m.col_indices.insert(m.col_indices.end(), csr.col_indices().begin(), csr.col_indices().end());
  m.values.insert(m.values.end(), csr.values().begin(), csr.values().end());
}

void UploadAssembler::add_text(const std::string& bytes) {
  if (header_.encoding() != v1::UploadHeader::MATRIX_MARKET)
    throw_invalid(where() + ": Matrix Market data in a CSR upload");
  text_ += bytes;
}

UploadedMatrix UploadAssembler::finish() {
  if (!started_) throw_invalid("upload stream ended before a header arrived");
  MatrixMarketOptions options;
  options.allow_non_finite = header_.allow_non_finite();
  if (header_.encoding() == v1::UploadHeader::MATRIX_MARKET) {
    if (looks_gzipped(text_)) text_ = gunzip(text_, max_upload_bytes_);
    result_.matrix = read_matrix_market_text(text_, options);
    text_.clear();
    text_.shrink_to_fit();
    check_values_fit(result_.matrix, result_.precision);
    return std::move(result_);
  }
  const auto& m = result_.matrix;
  const auto complete = [&](const char* array, std::size_t have, std::int64_t declared) {
    if (have != static_cast<std::size_t>(declared))
      throw_invalid("upload stream ended after " + to_string(have) + " of " +
                    to_string(declared) + " " + array);
  };
  complete("row_offsets", m.row_offsets.size(), header_.rows() + 1);
  complete("col_indices", m.col_indices.size(), header_.nnz());
  complete("values", m.values.size(), header_.nnz());
  // Unsorted and repeated columns are accepted (proto/spmvd.proto, CsrChunk): checked for
  // range first, so the sort only ever touches valid slices, then put in order and summed.
  validate(m, header_.allow_non_finite(), ColumnOrder::any);
  result_.normalized = sort_rows_and_sum_duplicates(result_.matrix);
  // Summing finite duplicates can overflow (1e308 + 1e308); the full check is cheap beside them.
  if (result_.normalized.duplicates_summed > 0) validate(m, header_.allow_non_finite());
  check_values_fit(result_.matrix, result_.precision);  // after summing: 3e38 + 3e38 overflows too
  return std::move(result_);
}

}  // namespace spmvd
