#include "kernels/formats/cpu_gpu_split/cpu_gpu_split_layout.hpp"

#include <tbb/task_arena.h>

#include "kernels/formats/common/cpu_rows.hpp"
#include "kernels/formats/cuda_hyb/hyb_layout.hpp"

namespace spmvd {

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
  return split;
}

template <typename Value>
void multiply_host_part(const HostCooPart<Value>& host, const Value* x, Value* partial) {
  const std::int64_t* offsets = host.row_offsets.data();
  const ColIndex* cols = host.col_indices.data();
  const Value* values = host.values.data();
  // Isolated: run from a CUDA host function, the calling thread must not pick up, while it
  // waits, an unrelated task of the arena that may itself wait for this stream (a deadlock).
  tbb::this_task_arena::isolate([&] {
    cpu_detail::for_row_ranges(static_cast<std::int64_t>(host.rows.size()),
                               [&](std::int64_t begin, std::int64_t end) {
                                 for (std::int64_t t = begin; t < end; ++t) {
                                   Value sum = 0;
                                   for (std::int64_t k = offsets[t]; k < offsets[t + 1]; ++k)
                                     sum += values[k] * x[cols[k]];
                                   partial[t] = sum;
                                 }
                               });
  });
}

template CpuGpuSplitLayout<float> make_cpu_gpu_split_layout(const CsrMatrix<double>&,
                                                            std::int64_t);
template CpuGpuSplitLayout<double> make_cpu_gpu_split_layout(const CsrMatrix<double>&,
                                                             std::int64_t);
template void multiply_host_part(const HostCooPart<float>&, const float*, float*);
template void multiply_host_part(const HostCooPart<double>&, const double*, double*);

}  // namespace spmvd
