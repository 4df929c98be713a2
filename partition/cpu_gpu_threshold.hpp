#pragma once
// The threshold K of paper 003's CPU-GPU split (Sec. 4.3 Algorithm 1, Sec. 5 Eqs. 6-8,
// Algorithm 3): the first K non-zeros of every row form an ELL part of width K on the GPU, the
// rest a COO part on the CPU, both run at once, and K is chosen where the two times balance.
//
// The part sizes come from the DF alone (Eqs. 2-5, models/df_split.hpp ell_coo_split, which
// sums the overflowing rows from i = K + 1 where Eqs. 4-5 print i = K). The compute times are
// callables, so the calibrated models of this host and GPU plug in; paper_003_split_costs gives
// the paper's Eqs. 6-7. Unlike Eq. 7, the copies that every multiply makes are counted, as
// issue 15 asks: x to the device before the GPU part can start, and the CPU part's rows of y
// (values and 32-bit row indices, the sparse vector the paper adds on the GPU with
// cusparseAxpyi, Algorithm 2 line 17) to the device after the CPU part. The copy of the summed
// y back to the host is the same for every K and is left out.
//
// K ranges over 1..longest row (Algorithm 3; K = 0 is the CPU-only format, another candidate).
// Search: Algorithm 3 scans every K; with T_gpu non-decreasing and T_cpu non-increasing in K
// (the paper's Sec. 5.2 premise: the ELL part only grows with K, the COO part only shrinks),
// the K minimising max(T_gpu, T_cpu) is at the crossing, found by binary search:
// O(M' log(longest row)) for M' non-empty row vector sets, plus that many cost calls.
// Thread safety: pure functions.

#include <cstdint>
#include <functional>

#include "core/matrix_features.hpp"
#include "models/families/cpu_gpu/cpu_gpu_time_model.hpp"
#include "models/df_split.hpp"

namespace spmvd {

struct CpuGpuSplitCosts {
  // Time of the GPU's ELL part (split.ell_entries slots of which split.ell_nnz non-zeros), ms.
  // Must not decrease as K grows.
  std::function<double(const EllCooSplit&)> gpu_part_ms;
  // Time of the CPU's COO part (split.coo_nnz non-zeros in split.coo_rows rows), ms. Must not
  // increase as K grows.
  std::function<double(const EllCooSplit&)> cpu_part_ms;
  double host_device_bytes_per_ms = 0.0;  // PCIe (or C2C) copy bandwidth; infinity: free copies
  double copy_latency_ms = 0.0;           // per copy that moves any bytes
  std::int64_t value_bytes = 8;           // 4 (fp32) or 8 (fp64)
};

struct CpuGpuSplitTime {
  std::int64_t ell_width = 0;  // K
  EllCooSplit split;
  double gpu_ms = 0.0;    // copy of x + the ELL part
  double cpu_ms = 0.0;    // the COO part + the copy of its rows of y
  double total_ms = 0.0;  // Eq. 8: max(gpu_ms, cpu_ms), the two run at once
  friend bool operator==(const CpuGpuSplitTime&, const CpuGpuSplitTime&) = default;
};

// The times at threshold K >= 0. Throws Error(invalid_argument) on a negative K, on a
// bandwidth that is not positive or value_bytes that is not 4 or 8, or when a callable is unset.
CpuGpuSplitTime cpu_gpu_split_time(const MatrixFeatures& features, std::int64_t ell_width,
                                   const CpuGpuSplitCosts& costs);

// Algorithm 3: the K in [1, row_length_max] with the least max(T_gpu, T_cpu); between the two
// K around the crossing, the smaller maximum, the larger K on a tie (Algorithm 3 lines 15-19).
// A matrix with no non-zeros gets K = 0. Throws as cpu_gpu_split_time.
CpuGpuSplitTime balanced_cpu_gpu_threshold(const MatrixFeatures& features,
                                           const CpuGpuSplitCosts& costs);

// Eqs. 6-7 of paper 003 as the compute callables (models/families/cpu_gpu/cpu_gpu_time_model.hpp):
// T_C = 2 NNZ(CPU) / fc / (nc - 1) scaled by the host's locality factor at x_randomness (the
// matrix's x_gather_randomness, models/locality.hpp; 1: the random-column rate fc itself),
// T_G = NNZ(GPU) / (C F). The copies as given.
CpuGpuSplitCosts paper_003_split_costs(const CpuGpuTimeCoefficients& coefficients,
                                       double x_randomness, double host_device_bytes_per_ms,
                                       std::int64_t value_bytes);

}  // namespace spmvd
