#pragma once
// The y traffic of COO's row writes, beyond what the COO fit holds. The segmented COO kernel
// (kernels/formats/common/segmented_coo_kernel.cuh) reads and writes back each row it finishes
// once. The COO fit is taken on samples with sample_row_length entries in every row: their
// row writes stream through y, 2 * value bytes per sample_row_length entries. A workload with
// fewer entries per row writes more rows per entry, and HYB's COO part (the rows longer than
// the ELL width) writes rows scattered among all rows, each touching a 32-byte sector of y of
// its own: road-6M's HYB of width 3 ran 1.3x slower on an H100 than ELL + COO predicted.
//
// Written rows spread uniformly over `rows` touch, of the S = ceil(rows / v) sectors of v = 32
// / value bytes values, S (1 - (1 - p)^v) with p = written rows / rows; each is read and
// written: 2 * 32 bytes. Less what the fit holds already (2 * value bytes * nnz /
// sample_row_length), never negative: longer rows than the samples' are not credited.

#include <cstdint>

namespace spmvd {

double coo_row_write_excess_bytes(std::int64_t rows, std::int64_t written_rows, std::int64_t nnz,
                                  std::int64_t value_bytes,
                                  std::int64_t sample_row_length) noexcept;

}  // namespace spmvd
