#include "kernels/formats/cpu_gpu_split/cpu_gpu_split_layout.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>

#include "kernels/formats/cuda_hyb/hyb_layout.hpp"

namespace spmvd {

std::int64_t host_chunk_count(std::int64_t nnz) noexcept {
  if (nnz <= 0) return 0;
  return std::clamp(nnz / kHostChunkMinEntries, std::int64_t{1}, kHostChunksMax);
}

namespace {

// Equal chunks of the host part's entries, and the row each one begins in.
template <typename Value>
void plan_host_chunks(HostCooPart<Value>& host) {
  const std::int64_t nnz = host.nnz();
  const std::int64_t chunks = host_chunk_count(nnz);
  host.chunk_offsets.resize(static_cast<std::size_t>(chunks + 1));
  host.chunk_first_rows.resize(static_cast<std::size_t>(chunks));
  for (std::int64_t c = 0; c <= chunks; ++c)
    host.chunk_offsets[c] = chunks == 0 ? 0 : c * nnz / chunks;
  for (std::int64_t c = 0; c < chunks; ++c) {
    // The last row whose first entry is at or before the chunk's first: rows are not empty, so
    // it holds that entry.
    const auto after =
        std::upper_bound(host.row_offsets.begin(), host.row_offsets.end(), host.chunk_offsets[c]);
    host.chunk_first_rows[c] = (after - host.row_offsets.begin()) - 1;
  }
}

}  // namespace

template <typename Value>
CpuGpuSplitLayout<Value> make_cpu_gpu_split_layout(const CsrMatrix<double>& matrix,
                                                   std::int64_t ell_width) {
  // Algorithm 1 is HYB's split: the ELL part and the row-sorted COO remainder of cuda_hyb.
  HybLayout<Value> hyb = make_hyb_layout<Value>(matrix, ell_width);
  CpuGpuSplitLayout<Value> split;
  split.rows = hyb.rows;
  split.cols = matrix.cols;
  split.ell_width = hyb.ell_width;
  split.ell_col_indices = std::move(hyb.ell_col_indices);
  split.ell_values = std::move(hyb.ell_values);
  const std::vector<std::int32_t>& entry_rows = hyb.coo.row_indices;
  for (std::size_t k = 0; k < entry_rows.size(); ++k) {
    if (k == 0 || entry_rows[k] != entry_rows[k - 1]) {
      split.host.rows.push_back(entry_rows[k]);
      split.host.row_offsets.push_back(static_cast<std::int64_t>(k));
    }
  }
  split.host.row_offsets.push_back(static_cast<std::int64_t>(entry_rows.size()));
  split.host.col_indices = std::move(hyb.coo.col_indices);
  split.host.values = std::move(hyb.coo.values);
  plan_host_chunks(split.host);
  return split;
}

template <typename Value>
void multiply_host_part(const HostCooPart<Value>& host, const Value* x, Value* partial,
                        Value* carries) {
  const std::int64_t touched = static_cast<std::int64_t>(host.rows.size());
  const std::int64_t chunks = host.chunk_count();
  const std::int64_t* offsets = host.row_offsets.data();
  const std::int64_t* chunk_offsets = host.chunk_offsets.data();
  const std::int64_t* first_rows = host.chunk_first_rows.data();
  const ColIndex* cols = host.col_indices.data();
  const Value* values = host.values.data();
  // carries[2c]: chunk c's piece of a row begun in an earlier chunk; carries[2c + 1]: its piece
  // of a row begun in it that goes on into the next.
  const auto run_chunk = [&](std::int64_t c) {
    const std::int64_t begin = chunk_offsets[c];
    const std::int64_t end = chunk_offsets[c + 1];
    Value continued = 0;
    Value continuing = 0;
    for (std::int64_t t = first_rows[c]; t < touched && offsets[t] < end; ++t) {
      const std::int64_t from = std::max(offsets[t], begin);
      const std::int64_t to = std::min(offsets[t + 1], end);
      Value sum = 0;
      for (std::int64_t k = from; k < to; ++k) sum += values[k] * x[cols[k]];
      if (offsets[t] < begin)
        continued = sum;
      else if (offsets[t + 1] > end)
        continuing = sum;
      else
        partial[t] = sum;
    }
    carries[2 * c] = continued;
    carries[2 * c + 1] = continuing;
  };
  // Isolated: run from a CUDA host function, the calling thread must not pick up, while it
  // waits, an unrelated task of the arena that may itself wait for this stream (a deadlock).
  tbb::this_task_arena::isolate([&] {
    tbb::parallel_for(tbb::blocked_range<std::int64_t>(0, chunks, 1),
                      [&](const tbb::blocked_range<std::int64_t>& range) {
                        for (std::int64_t c = range.begin(); c < range.end(); ++c) run_chunk(c);
                      });
  });
  // The cut rows, in chunk order: the chunk a cut row begins in writes its first piece, each
  // later chunk it reaches adds its own (so the sum order is fixed by the chunking alone).
  for (std::int64_t c = 0; c < chunks; ++c) {
    const std::int64_t first = first_rows[c];
    if (offsets[first] < chunk_offsets[c]) partial[first] += carries[2 * c];
    if (c + 1 < chunks) {
      const std::int64_t next = first_rows[c + 1];
      if (offsets[next] >= chunk_offsets[c] && offsets[next] < chunk_offsets[c + 1])
        partial[next] = carries[2 * c + 1];
    }
  }
}

template CpuGpuSplitLayout<float> make_cpu_gpu_split_layout(const CsrMatrix<double>&, std::int64_t);
template CpuGpuSplitLayout<double> make_cpu_gpu_split_layout(const CsrMatrix<double>&,
                                                             std::int64_t);
template void multiply_host_part(const HostCooPart<float>&, const float*, float*, float*);
template void multiply_host_part(const HostCooPart<double>&, const double*, double*, double*);

}  // namespace spmvd
