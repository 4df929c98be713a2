#pragma once
// The structural features of a matrix that the tuner and the models decide from (computed by
// tuner/feature_extraction). Values do not enter: only the sparsity pattern does.

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/field_set.hpp"

namespace spmvd {

// One row vector set of paper 000 (Sec. 4.1): b_m rows have exactly m non-zeros.
struct RowLengthCount {
  std::int64_t length = 0;  // m
  std::int64_t rows = 0;    // b_m = f_A(m)
  friend bool operator==(const RowLengthCount&, const RowLengthCount&) = default;
};

// x gathers are counted per group of kXGatherGroupRows consecutive rows (the rows of one warp
// in SELL, ELL and CSR scalar; neighbouring warps in CSR vector) in sectors of
// kXSectorColumns columns (a 32-byte sector of fp32 x).
inline constexpr std::int64_t kXGatherGroupRows = 32;
inline constexpr std::int64_t kXSectorColumns = 8;

struct MatrixFeatures {
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::int64_t nnz = 0;
  std::int64_t row_length_min = 0;
  std::int64_t row_length_max = 0;
  double row_length_mean = 0.0;
  double row_length_stddev = 0.0;
  std::int64_t empty_rows = 0;
  // The distribution function f_A of paper 000 (Sec. 4.1), only the non-empty row vector sets,
  // ascending in length. Rows of length 0 are counted in empty_rows, not here.
  std::vector<RowLengthCount> distribution;
  // Mean over rows of (max column - min column + 1) / cols: a cheap x-locality measure
  // (1/cols for a diagonal, ~1 for rows that span all of x).
  double mean_row_span_fraction = 0.0;
  // Distinct x sectors (column / kXSectorColumns) that each group of kXGatherGroupRows rows
  // touches, summed over groups, per non-zero: ~1 for random columns, ~(L + 38) / (256 L)
  // for a band of L columns a row. Unlike the span it sees a block-diagonal matrix of random
  // blocks as random, and a stencil's few separate column runs as what they cost.
  double x_sectors_per_nonzero = 0.0;
  // Features only some formats need, by the name of the format whose hook computed them
  // (FormatRules::own_features; read through that format's typed accessor). Absent where the
  // hook did not run (calibration samples): each format says how it bounds itself then.
  std::map<std::string, FieldSet, std::less<>> format_features;
  // The formats whose own features the pass left out, by name, ascending: their builds could
  // not be repaid by the multiplies the tuning expected (tuner/feature_extraction.hpp), so the
  // tuner does not offer them until a later pass adds their features.
  std::vector<std::string> formats_left_out;

  bool left_out(std::string_view format) const noexcept {
    return std::binary_search(formats_left_out.begin(), formats_left_out.end(), format);
  }

  friend bool operator==(const MatrixFeatures&, const MatrixFeatures&) = default;
};

}  // namespace spmvd
