#pragma once
// Splitting a matrix by row-length threshold K from its distribution function alone (paper 003
// Sec. 4.3, Eqs. 2-5): the first K entries of every row go to an ELL part of width K, the rest
// to a COO part. Used by the HYB model and the CPU-GPU time model.

#include <cstdint>

#include "core/matrix_features.hpp"

namespace spmvd {

struct EllCooSplit {
  std::int64_t ell_nnz = 0;      // true non-zeros in the ELL part (paper 003 Eq. 4)
  std::int64_t ell_entries = 0;  // rows * K: the ELL part with its padding
  std::int64_t coo_nnz = 0;      // non-zeros left for COO (paper 003 Eq. 5)
  std::int64_t coo_rows = 0;     // rows with more than K non-zeros
  friend bool operator==(const EllCooSplit&, const EllCooSplit&) = default;
};

// O(distinct row lengths). Throws Error(invalid_argument) on a negative K.
EllCooSplit ell_coo_split(const MatrixFeatures& features, std::int64_t ell_width);

}  // namespace spmvd
