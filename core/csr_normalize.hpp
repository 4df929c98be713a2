#pragma once
// Puts an uploaded CSR into the order every format assumes (core/csr_matrix.hpp): column
// indices ascending and unique within each row. SciPy and many assemblers produce rows in
// insertion order, and finite-element assembly produces duplicates; the Matrix Market reader
// already sorts and sums (core/matrix_market.cpp), so an uploaded CSR gets the same treatment.

#include <cstdint>

#include "core/csr_matrix.hpp"

namespace spmvd {

struct NormalizeOutcome {
  std::int64_t rows_sorted = 0;         // rows whose columns were out of order or repeated
  std::int64_t duplicates_summed = 0;   // entries folded into an earlier one (nnz went down by this)
};

// Sorts each row's entries by column (stable, so duplicates keep their upload order) and sums
// duplicates in that order, then compacts the arrays. Rows already strictly increasing are
// left untouched (the common case costs one read of col_indices). Parallel over rows with
// oneTBB; O(nnz log(row length)) for the unsorted rows, O(nnz) otherwise.
// Precondition: row_offsets and column ranges are valid (validate(m, ..., ColumnOrder::any)).
NormalizeOutcome sort_rows_and_sum_duplicates(CsrMatrix<double>& m);

}  // namespace spmvd
