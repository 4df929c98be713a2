#pragma once
// Host-side layout of paper 003's CPU-GPU split at threshold K (Sec. 4.3 Algorithm 1): the
// first K entries of every row in a column-major ELL part of width K for the GPU (cuda_hyb's
// layout, common to cuda_ell: entry j of row r at j*rows + r, padding kPaddingColumn / 0), and
// the entries beyond K for the host, grouped by the rows they touch so that the host sends back
// one partial value per touched row.

#include <cstdint>
#include <vector>

#include "core/csr_matrix.hpp"

namespace spmvd {

// The host part: cpu_coo's row-sorted COO entries (common/coo_layout.hpp), with the row index
// of each entry replaced by the run of entries of each touched row.
template <typename Value>
struct HostCooPart {
  std::vector<std::int32_t> rows;         // the rows longer than K, ascending
  std::vector<std::int64_t> row_offsets;  // rows.size() + 1: row t's entries are [t], [t + 1])
  std::vector<ColIndex> col_indices;
  std::vector<Value> values;
  std::int64_t nnz() const noexcept { return static_cast<std::int64_t>(values.size()); }
};

template <typename Value>
struct CpuGpuSplitLayout {
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::int64_t ell_width = 0;             // K
  std::vector<ColIndex> ell_col_indices;  // rows * K slots
  std::vector<Value> ell_values;          // rows * K slots
  HostCooPart<Value> host;
};

// O(rows * K + nnz). Throws Error(invalid_argument) for K < 0 or rows >= 2^31.
template <typename Value>
CpuGpuSplitLayout<Value> make_cpu_gpu_split_layout(const CsrMatrix<double>& matrix,
                                                   std::int64_t ell_width);

// partial[t] = sum of the host part's entries of row host.rows[t] times x (no alpha: the GPU
// applies alpha when it adds the partial sums, so a buffer written now serves the multiply it
// belongs to whatever alpha a later one has). oneTBB over the touched rows, cpu_coo's grain;
// no two tasks write the same partial. x has the matrix's cols entries. Thread safety: reads
// `host` and x only.
template <typename Value>
void multiply_host_part(const HostCooPart<Value>& host, const Value* x, Value* partial);

}  // namespace spmvd
