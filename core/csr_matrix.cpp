#include "core/csr_matrix.hpp"

#include <charconv>
#include <cmath>
#include <string>

#include "core/error.hpp"

namespace spmvd {

template <typename Value>
void validate(const CsrMatrix<Value>& m, bool allow_non_finite, ColumnOrder order) {
  using std::to_string;
  if (m.rows < 0 || m.cols < 0 || m.rows > kMaxDimension || m.cols > kMaxDimension)
    throw_invalid("matrix dimensions " + to_string(m.rows) + " x " + to_string(m.cols) +
                  " outside [0, 2^31-1]");
  if (static_cast<std::int64_t>(m.row_offsets.size()) != m.rows + 1)
    throw_invalid("row_offsets has " + to_string(m.row_offsets.size()) + " entries, expected rows+1 = " +
                  to_string(m.rows + 1));
  if (m.row_offsets.front() != 0)
    throw_invalid("row_offsets[0] is " + to_string(m.row_offsets.front()) + ", expected 0");
  if (m.values.size() != m.col_indices.size())
    throw_invalid("values has " + to_string(m.values.size()) + " entries, col_indices has " +
                  to_string(m.col_indices.size()));
  if (m.row_offsets.back() != m.nnz())
    throw_invalid("row_offsets[rows] is " + to_string(m.row_offsets.back()) + ", expected nnz " +
                  to_string(m.nnz()));
  for (std::int64_t r = 0; r < m.rows; ++r) {
    const RowOffset begin = m.row_offsets[r], end = m.row_offsets[r + 1];
    if (end < begin)
      throw_invalid("row " + to_string(r) + ": row_offsets decrease (" + to_string(begin) +
                    " then " + to_string(end) + ")");
    for (RowOffset k = begin; k < end; ++k) {
      const ColIndex c = m.col_indices[k];
      if (c < 0 || c >= m.cols)
        throw_invalid("row " + to_string(r) + ": column index " + to_string(c) +
                      " outside [0, ncols " + to_string(m.cols) + ") (entry " + to_string(k) + ")");
      if (order == ColumnOrder::strictly_increasing && k > begin && c <= m.col_indices[k - 1])
        throw_invalid("row " + to_string(r) + ": column indices not strictly increasing (" +
                      to_string(m.col_indices[k - 1]) + " then " + to_string(c) + ", entry " +
                      to_string(k) + ")");
      if (!allow_non_finite && !std::isfinite(static_cast<double>(m.values[k])))
        throw_invalid("row " + to_string(r) + ", column " + to_string(c) +
                      ": value is not finite (entry " + to_string(k) + ")");
    }
  }
}

template <typename Value>
void reference_spmv(const CsrMatrix<Value>& m, const double* x, double* y, double alpha,
                    double beta) {
  for (std::int64_t r = 0; r < m.rows; ++r) {
    double sum = 0.0;
    for (RowOffset k = m.row_offsets[r]; k < m.row_offsets[r + 1]; ++k)
      sum += static_cast<double>(m.values[k]) * x[m.col_indices[k]];
    // beta == 0 must not propagate NaN/garbage already in y (BLAS convention).
    y[r] = alpha * sum + (beta == 0.0 ? 0.0 : beta * y[r]);
  }
}

void check_values_fit(const CsrMatrix<double>& m, Precision precision) {
  if (precision != Precision::fp32) return;
  using std::to_string;
  for (std::int64_t r = 0; r < m.rows; ++r) {
    for (RowOffset k = m.row_offsets[r]; k < m.row_offsets[r + 1]; ++k) {
      const double v = m.values[k];
      if (!std::isfinite(v) || std::isfinite(static_cast<float>(v))) continue;
      char shortest[32];
      const auto written = std::to_chars(shortest, shortest + sizeof shortest, v);
      throw_invalid("row " + to_string(r) + ", column " + to_string(m.col_indices[k]) +
                    ": value " + std::string(shortest, written.ptr) +
                    " overflows fp32 (largest finite 3.4028235e+38) (entry " + to_string(k) +
                    "); upload the matrix as FP64 or scale it");
    }
  }
}

template void validate(const CsrMatrix<float>&, bool, ColumnOrder);
template void validate(const CsrMatrix<double>&, bool, ColumnOrder);
template void reference_spmv(const CsrMatrix<float>&, const double*, double*, double, double);
template void reference_spmv(const CsrMatrix<double>&, const double*, double*, double, double);

}  // namespace spmvd
