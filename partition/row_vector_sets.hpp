#pragma once
// The bookkeeping of paper 000 Sec. 4.2 over contiguous ranges of non-empty row vector sets:
// for C = R_{a..b} (the sets a..b of the DF, in ascending length),
//   N(C) = sum b_m,  W(C) = max m with b_m != 0,  NNZ(C) = sum m b_m,
//   E(C) = N(C) W(C) (the slots of the smallest ELL block holding C),  D(C) = NNZ(C) / E(C).
// Prefix sums make every query O(1) after O(M') construction (M' non-empty sets).
// Immutable after construction; safe to share between threads.

#include <cstdint>
#include <span>
#include <vector>

#include "core/matrix_features.hpp"

namespace spmvd {

// One contiguous range C of row vector sets and its paper 000 Sec. 4.2 quantities.
struct RowVectorSetRange {
  std::int64_t rows = 0;   // N(C)
  std::int64_t width = 0;  // W(C): the longest row in C
  std::int64_t nnz = 0;    // NNZ(C)

  std::int64_t entries() const noexcept { return rows * width; }     // E(C)
  std::int64_t padding() const noexcept { return entries() - nnz; }  // E(C) - NNZ(C)
  double density() const noexcept {                                  // D(C); 0 when E = 0
    return entries() == 0 ? 0.0 : static_cast<double>(nnz) / static_cast<double>(entries());
  }
  friend bool operator==(const RowVectorSetRange&, const RowVectorSetRange&) = default;
};

class RowVectorSets {
 public:
  // `sets`: the non-empty sets {m, b_m}, m strictly ascending, b_m > 0 (as
  // MatrixFeatures::distribution and RowLengthDistribution::sets hold them). Throws
  // Error(invalid_argument) naming the first set that breaks this.
  explicit RowVectorSets(std::span<const RowLengthCount> sets);

  // M', the number of non-empty sets.
  std::int64_t size() const noexcept { return static_cast<std::int64_t>(lengths_.size()); }
  // m of set i (0-based).
  std::int64_t length(std::int64_t i) const noexcept { return lengths_[i]; }

  // C = sets [first, last) (0-based, half-open, first < last <= size()), O(1). Unchecked.
  RowVectorSetRange range(std::int64_t first, std::int64_t last) const noexcept {
    return {.rows = prefix_rows_[last] - prefix_rows_[first],
            .width = lengths_[last - 1],
            .nnz = prefix_nnz_[last] - prefix_nnz_[first]};
  }
  // All sets: the whole matrix less its empty rows.
  RowVectorSetRange all() const noexcept {
    return size() == 0 ? RowVectorSetRange{} : range(0, size());
  }

 private:
  std::vector<std::int64_t> lengths_;      // m of each set
  std::vector<std::int64_t> prefix_rows_;  // size() + 1 entries
  std::vector<std::int64_t> prefix_nnz_;   // size() + 1 entries
};

}  // namespace spmvd
