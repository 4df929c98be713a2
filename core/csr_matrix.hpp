#pragma once
// Host CSR, the vocabulary every format is built from.
//
// Limits: rows and cols < 2^31 (column indices are 32-bit, as on the GPU); row offsets are
// 64-bit, so nnz may exceed 2^31 (bounded by host and device memory). Column indices within
// a row are sorted ascending and unique once a matrix has passed validate().

#include <cstdint>
#include <limits>
#include <vector>

#include "core/precision.hpp"

namespace spmvd {

using RowOffset = std::int64_t;
using ColIndex = std::int32_t;
inline constexpr std::int64_t kMaxDimension = std::numeric_limits<ColIndex>::max();

template <typename Value>
struct CsrMatrix {
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::vector<RowOffset> row_offsets{0};  // rows + 1 entries, row_offsets[0] == 0
  std::vector<ColIndex> col_indices;      // nnz entries
  std::vector<Value> values;              // nnz entries

  std::int64_t nnz() const noexcept { return static_cast<std::int64_t>(col_indices.size()); }
  std::int64_t row_length(std::int64_t row) const noexcept {
    return row_offsets[row + 1] - row_offsets[row];
  }
};

// Same structure, values converted (fp64 -> fp32 rounds to nearest).
template <typename To, typename From>
CsrMatrix<To> convert_values(const CsrMatrix<From>& m) {
  CsrMatrix<To> out{m.rows, m.cols, m.row_offsets, m.col_indices, {}};
  out.values.assign(m.values.begin(), m.values.end());
  return out;
}

// What validate() requires of the column indices within a row. `any` is the check before
// sort_rows_and_sum_duplicates (core/csr_normalize.hpp), which then establishes the order.
enum class ColumnOrder { strictly_increasing, any };

// Checks the invariants above; throws Error(invalid_argument) naming the first violation
// ("row 12: column index 5003 >= ncols 5000 (entry 88)"). With allow_non_finite false, NaN
// and Inf values are rejected too.
template <typename Value>
void validate(const CsrMatrix<Value>& m, bool allow_non_finite = false,
              ColumnOrder order = ColumnOrder::strictly_increasing);

// Refuses a finite value that the matrix's precision cannot hold: for fp32, a magnitude that
// rounds to infinity (1e300, or anything above FLT_MAX plus half an ulp). Throws
// Error(invalid_argument) naming row, column, entry index and value. NaN and Inf are left to
// validate(). fp64 holds every double. O(nnz).
void check_values_fit(const CsrMatrix<double>& m, Precision precision);

// y = alpha*A*x + beta*y in double precision, single-threaded: the reference every kernel
// is compared against.
template <typename Value>
void reference_spmv(const CsrMatrix<Value>& m, const double* x, double* y, double alpha,
                    double beta);

}  // namespace spmvd
