#pragma once
// The analytic time model of paper 000 (Sec. 5.3) for the blocked ELL format BCE: a matrix split
// by the DF into row vector sets C_1..C_k, each stored as a dense N(C_i) x W(C_i) ELL block,
//   T_t = (2N + 2NNZ) / TW,
//   T_c(C_i) = W(C_i) * L / f_p  if N(C_i) <= L,  E(C_i) / f_p  otherwise,
//   T = T_t + sum_i T_c(C_i) / s.

#include <tuple>
#include <cstdint>
#include <span>
#include <vector>

#include "core/field_set.hpp"
#include "core/matrix_features.hpp"

namespace spmvd {

struct BlockedEllTimeCoefficients {
  double transfer_elements_per_ms = 0.0;  // TW: host-device bandwidth in elements per ms
  double sm_elements_per_ms = 0.0;        // f_p: ELL entries one SM processes per ms
  std::int64_t lower_limit_rows = 0;      // L: fewer rows than this underuse an SM (192 on K20c)
  int sm_count = 0;                       // s
  static constexpr auto kFields = std::tuple{
      declare_field("transfer_elements_per_ms", &BlockedEllTimeCoefficients::transfer_elements_per_ms),
      declare_field("sm_elements_per_ms", &BlockedEllTimeCoefficients::sm_elements_per_ms),
      declare_field("lower_limit_rows", &BlockedEllTimeCoefficients::lower_limit_rows),
      declare_field("sm_count", &BlockedEllTimeCoefficients::sm_count)};
  friend bool operator==(const BlockedEllTimeCoefficients&,
                         const BlockedEllTimeCoefficients&) = default;
};

// One part C_i of a partition: N(C_i) rows, width W(C_i).
struct RowVectorPartition {
  std::int64_t rows = 0;
  std::int64_t width = 0;
  std::int64_t entries() const noexcept { return rows * width; }  // E(C_i)
  friend bool operator==(const RowVectorPartition&, const RowVectorPartition&) = default;
};

// The parts R_{M_{j-1}+1, M_j} of paper 000 Sec. 4.1 for ascending row-length upper bounds
// M_1 < M_2 < ... < M_k (the last must be >= row_length_max). W is the longest row present in
// the part; empty rows (length 0) join the first part. Throws Error(invalid_argument) when the
// bounds are not strictly ascending and positive or do not cover row_length_max.
std::vector<RowVectorPartition> partitions_from_bounds(const MatrixFeatures& features,
                                                       std::span<const std::int64_t> upper_lengths);

// T_t for a rows x cols matrix with nnz entries: (rows + cols + 2 nnz) / TW, which is the
// paper's (2N + 2NNZ) / TW for a square matrix.
double transmission_time_ms(std::int64_t rows, std::int64_t cols, std::int64_t nnz,
                            const BlockedEllTimeCoefficients& c);
// T_c(C_i). Throws Error(invalid_argument) when f_p <= 0.
double partition_compute_time_ms(const RowVectorPartition& part,
                                 const BlockedEllTimeCoefficients& c);
// T = T_t + sum T_c(C_i) / s. Throws Error(invalid_argument) when TW, f_p or s are not positive.
double blocked_ell_time_ms(const MatrixFeatures& features,
                           std::span<const std::int64_t> upper_lengths,
                           const BlockedEllTimeCoefficients& c);

}  // namespace spmvd
