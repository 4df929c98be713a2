#pragma once
// Matrix Market I/O. Reads the `coordinate` format with field real, integer or pattern and
// symmetry general, symmetric or skew-symmetric (the mirrored triangle is expanded), converts
// 1-based indices, sums duplicates and sorts each row. Files ending in .gz are read through
// zlib. Every malformed input throws Error(invalid_argument) with the line number and what was
// wrong ("line 14: row index 0 outside [1, 5000]").

#include <cstdint>
#include <iosfwd>
#include <string>

#include "core/csr_matrix.hpp"

namespace spmvd {

struct MatrixMarketOptions {
  bool allow_non_finite = false;  // accept NaN / Inf values
  std::int64_t max_nnz = std::int64_t{1} << 40;  // refuse size lines declaring more entries
};

CsrMatrix<double> read_matrix_market(std::istream& in, const MatrixMarketOptions& options = {});
CsrMatrix<double> read_matrix_market_text(const std::string& text,
                                          const MatrixMarketOptions& options = {});
// Opens `path` (gzip if it ends in .gz); a missing file is Error(not_found).
CsrMatrix<double> read_matrix_market_file(const std::string& path,
                                          const MatrixMarketOptions& options = {});

// Writes `coordinate real general`, 1-based, with 17 significant digits (round-trips fp64).
void write_matrix_market(std::ostream& out, const CsrMatrix<double>& m);
void write_matrix_market_file(const std::string& path, const CsrMatrix<double>& m);

}  // namespace spmvd
