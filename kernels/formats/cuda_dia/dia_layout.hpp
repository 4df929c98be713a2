#pragma once
// Host-side DIA layout (Bell & Garland, SC'09, Sec. 3.1): the occupied diagonals' offsets
// (column - row), ascending, and their values diagonal-major: diagonal d of row r at
// d * rows + r, zero where the diagonal has no entry in that row. cuda_dia builds the same
// arrays on the device (dia_device_layout.hpp); this host build is the reference its GPU test
// compares them with, element by element.

#include <cstdint>
#include <vector>

#include "core/csr_matrix.hpp"

namespace spmvd {

template <typename Value>
struct DiaLayout {
  std::int64_t rows = 0;
  std::vector<std::int32_t> offsets;  // ascending, each in (-rows, cols)
  std::vector<Value> values;          // offsets.size() * rows
};

// O(nnz log diagonals + rows + cols) with a bitmap of rows + cols - 1 offsets. Builds whatever
// it is given (the rules keep DIA to matrices of few diagonals; the conformance test runs
// every candidate on every matrix). Entries of one (row, column) are summed.
template <typename Value>
DiaLayout<Value> make_dia_layout(const CsrMatrix<double>& matrix);

}  // namespace spmvd
