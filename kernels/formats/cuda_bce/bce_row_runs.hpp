#pragma once
// BCE's own feature: where the rows of each length lie. BCE reorders rows by length (paper 000
// Algorithm 3) and writes y back through rowNo, so a block whose rows are not consecutive rows
// of the caller writes y scattered: every run of consecutive rows it holds ends in a 32-byte
// sector partly written, which the block holding the sector's other rows writes again (with
// 200 MB of matrix streaming through L2 between the two, the sector goes to DRAM twice). A
// stencil's blocks are a few long runs (no cost); a renumbered mesh's are one run a row (a
// sector a row: on delaunay_n16-x48-renumbered, 6 entries a row, 72 bytes of matrix, that is
// what the parts' predictions missed, H100 2026-11-24, model-accuracy of the memory-bound run).

#include <cstdint>
#include <optional>
#include <span>
#include <tuple>
#include <vector>

#include "core/csr_matrix.hpp"
#include "core/field_set.hpp"
#include "core/matrix_features.hpp"

namespace spmvd {

struct BceRowRuns {
  // Parallel to MatrixFeatures::distribution: the maximal runs of consecutive rows whose length
  // is that set's.
  std::vector<std::int64_t> runs;
  static constexpr auto kFields = std::tuple{declare_field("runs", &BceRowRuns::runs)};
  friend bool operator==(const BceRowRuns&, const BceRowRuns&) = default;
};

// One pass over the row offsets, split across cores (oneTBB); `distribution` the matrix's
// (ascending lengths). O(rows log sets).
BceRowRuns compute_bce_row_runs(const CsrMatrix<double>& matrix,
                                std::span<const RowLengthCount> distribution);

// The feature filed under "cuda_bce"; nullopt where the hook did not run. Throws
// Error(invalid_argument) when it does not have one entry per set of the distribution.
std::optional<BceRowRuns> cuda_bce_row_runs(const MatrixFeatures& features);

// The same runs read in place, without copying them: the composed formats ask once per part
// they price (BCE's OPA up to 8,256 parts a matrix). Valid while `features` is; nullopt and
// throws as cuda_bce_row_runs.
std::optional<std::span<const std::int64_t>> cuda_bce_row_runs_in_place(
    const MatrixFeatures& features);

// Runs of consecutive rows of a block holding the sets of lengths [first_length, last_length]:
// at most the sum of its sets' runs (adjacent runs of two of its lengths merge), its rows, and
// the rows outside it plus one (runs of the block are separated by rows of other blocks).
// row_runs parallel to features.distribution (ascending): O(log sets + the block's sets).
std::int64_t bce_block_row_runs(const MatrixFeatures& features,
                                std::span<const std::int64_t> row_runs,
                                std::int64_t first_length, std::int64_t last_length);
inline std::int64_t bce_block_row_runs(const MatrixFeatures& features,
                                       const BceRowRuns& row_runs, std::int64_t first_length,
                                       std::int64_t last_length) {
  return bce_block_row_runs(features, std::span<const std::int64_t>(row_runs.runs), first_length,
                            last_length);
}

}  // namespace spmvd
