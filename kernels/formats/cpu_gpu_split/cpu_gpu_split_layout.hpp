#pragma once
// Host-side layout of paper 003's CPU-GPU split at threshold K (Sec. 4.3 Algorithm 1): the
// first K entries of every row in a column-major ELL part of width K for the GPU (cuda_hyb's
// layout, common to cuda_ell: entry j of row r at j*rows + r, padding kPaddingColumn / 0), and
// the entries beyond K for the host, grouped by the rows they touch so that the host sends back
// one partial value per touched row.
//
// The host part is multiplied in parallel over its NON-ZEROS, not over its rows: paper 003's CPU
// part is COO (Sec. 4.4, MKL's COO multiply) and Eq. 6 prices it at 2 * NNZ(CPU) / (fc (nc - 1)),
// i.e. perfectly spread over the cores. Where K leaves only a few very long rows on the host
// (power-law and circuit matrices: 50 rows of 50,000 entries, or rows of millions), a task per
// row makes the host part as slow as its longest row: measured 14-22 ms on an H100 host with 16
// cores where Eq. 6 predicts 1-2 ms. So the entries are cut into contiguous chunks of equal size
// (boundaries fixed at build time from nnz alone, so every multiply, on any host, sums in the
// same order); a row cut by chunk boundaries is summed per chunk and its pieces are added after
// the parallel loop.

#include <cstdint>
#include <vector>

#include "core/csr_matrix.hpp"

namespace spmvd {

// Chunks of the host part: at least kHostChunkMinEntries entries each (a few microseconds of
// work, well above a oneTBB task's cost, so a small host part stays one serial chunk), and at
// most kHostChunksMax of them (4 per thread on a 64-thread host, 16 per core on the 16-core H100
// host, so work stealing evens out the cores). Fixed numbers, not the thread count: the chunking,
// hence the sum order and the result's last bits, depend on the matrix only.
inline constexpr std::int64_t kHostChunkMinEntries = 4096;
inline constexpr std::int64_t kHostChunksMax = 256;

// Chunks for a host part of nnz entries: 0 for nnz == 0, else
// clamp(floor(nnz / kHostChunkMinEntries), 1, kHostChunksMax).
std::int64_t host_chunk_count(std::int64_t nnz) noexcept;

// The host part: cpu_coo's row-sorted COO entries (common/coo_layout.hpp), with the row index
// of each entry replaced by the run of entries of each touched row, and its chunking.
template <typename Value>
struct HostCooPart {
  std::vector<std::int32_t> rows;         // the rows longer than K, ascending
  std::vector<std::int64_t> row_offsets;  // rows.size() + 1: row t's entries are [t], [t + 1])
  std::vector<ColIndex> col_indices;
  std::vector<Value> values;
  // Chunk c holds entries [chunk_offsets[c], chunk_offsets[c + 1]) (host_chunk_count(nnz()) + 1
  // offsets, sizes differing by at most one); chunk_first_rows[c] is the index t of the row that
  // holds entry chunk_offsets[c] (found by binary search in row_offsets at build time).
  std::vector<std::int64_t> chunk_offsets;
  std::vector<std::int64_t> chunk_first_rows;
  std::int64_t nnz() const noexcept { return static_cast<std::int64_t>(values.size()); }
  std::int64_t chunk_count() const noexcept {
    return static_cast<std::int64_t>(chunk_first_rows.size());
  }
  // The scratch multiply_host_part needs: two carry slots per chunk.
  std::int64_t carry_slots() const noexcept { return 2 * chunk_count(); }
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
// belongs to whatever alpha a later one has). x has the matrix's cols entries, partial
// host.rows.size(). oneTBB over host's chunks (one task per chunk, in an isolated arena): a row
// wholly inside a chunk is written to partial by that chunk; the pieces of a row cut by chunk
// boundaries go to the chunks' carry slots (the piece of the chunk's first row that began in an
// earlier chunk, the piece of its last row that goes on into later ones), and a serial pass over
// the chunks, in chunk order, writes and adds them (O(chunks)). The sums are in Value, in the
// same order every call. O(nnz / threads + chunks); no buffer is allocated per call.
// carries: host.carry_slots() values of scratch, owned by the caller (the operator keeps one
// buffer per operator); their contents on entry do not matter.
// Thread safety: reads host and x, writes partial and carries only: calls with distinct
// partial and carries buffers may run at once.
template <typename Value>
void multiply_host_part(const HostCooPart<Value>& host, const Value* x, Value* partial,
                        Value* carries);

}  // namespace spmvd
