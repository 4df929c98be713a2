#pragma once
// The sorted-rows CSR/ELL partition of paper 004 (Sec. 5): with the rows sorted by length,
// descending, a separator cuts the matrix in two; the rows above run as CSR vector, the rows
// below as ELL. The separator moves strip by strip (a strip = the rows that fill the GPU once:
// resident threads / threads per row, 960 on the paper's GTX 295 with one warp per row), each
// position is costed as CSR-vector time above + ELL time below, and the cheapest is kept. A
// separator at the top (all ELL) or the bottom (all CSR vector) is "no partition": one format
// wins outright.
//
// The sorted order's row lengths follow from the DF alone, so this reads only the DF: O(M' + S)
// for M' non-empty row vector sets and S strips, plus S CSR-strip and S + 1 ELL cost calls.
// Which original rows land where is a sort (or reorder_rows) done once the separator is known.
// Thread safety: pure function.

#include <cstdint>
#include <functional>
#include <vector>

#include "core/device_info.hpp"
#include "models/occupancy.hpp"
#include "partition/row_length_distribution.hpp"

namespace spmvd {

// Rows [first_row, first_row + rows) of the length-sorted matrix (descending).
struct SortedRowsPart {
  std::int64_t first_row = 0;
  std::int64_t rows = 0;
  std::int64_t nnz = 0;
  std::int64_t width = 0;  // its longest row: the first one
  friend bool operator==(const SortedRowsPart&, const SortedRowsPart&) = default;
};

struct StripPartitionCosts {
  // CSR vector time of one strip above the separator, ms (paper 004 Sec. 4.3.1 estimates CSR
  // vector strip by strip, and the part above costs the sum of its strips).
  std::function<double(const SortedRowsPart&)> csr_vector_strip_ms;
  // ELL time of the whole part below the separator, ms (Sec. 4.3.2); never called on no rows.
  std::function<double(const SortedRowsPart&)> ell_part_ms;
};

struct StripPartitionOptions {
  std::int64_t strip_rows = 0;  // rows that fill the GPU once (from occupancy); > 0
  // A split must beat the better single format by this fraction of its time, else "no
  // partition" (paper 004 Sec. 5 asks for a "significant" gain and names no number: 0 keeps
  // any gain).
  double min_gain_fraction = 0.0;
  friend bool operator==(const StripPartitionOptions&, const StripPartitionOptions&) = default;
};

struct StripPartition {
  std::int64_t rows = 0;           // N, empty rows included (they sort to the bottom)
  std::int64_t separator_row = 0;  // rows [0, separator) CSR vector, [separator, N) ELL
  double csr_vector_ms = 0.0;      // the part above
  double ell_ms = 0.0;             // the part below
  double total_ms = 0.0;
  bool all_ell() const noexcept { return separator_row == 0; }
  bool all_csr_vector() const noexcept { return separator_row == rows; }
  bool splits() const noexcept { return !all_ell() && !all_csr_vector(); }
  friend bool operator==(const StripPartition&, const StripPartition&) = default;
};

// The rows one wave of the CSR vector kernel holds: resident threads / threads per row =
// P x M x warps per block x warp size / threads_per_row (paper 004 Sec. 4.3.1's M P w_pTB for a
// warp per row; on the GTX 295, 30 SMs x 32 resident warps = 960). Throws
// Error(invalid_argument) when threads_per_row is not positive or the kernel cannot launch
// (P == 0), or when that leaves no row.
std::int64_t strip_rows_from_occupancy(const Occupancy& occupancy, const DeviceInfo& device,
                                       int threads_per_row);

// Strips of the length-sorted matrix, top to bottom: strip_rows each, the last possibly fewer.
// Throws Error(invalid_argument) when strip_rows <= 0.
std::vector<SortedRowsPart> sorted_strips(const RowLengthDistribution& df, std::int64_t strip_rows);

// The cheapest separator at a strip boundary (0, strip_rows, 2 strip_rows, ..., N). Ties go to
// no partition (all ELL before all CSR vector), then to the higher separator (fewer CSR rows).
// A matrix with no rows gets separator 0 and no cost.
// Throws Error(invalid_argument) when strip_rows <= 0, min_gain_fraction is outside [0, 1) or
// a callable is unset.
StripPartition strip_partition(const RowLengthDistribution& df, const StripPartitionCosts& costs,
                               const StripPartitionOptions& options);

}  // namespace spmvd
