#include "models/df_split.hpp"

#include <string>

#include "core/error.hpp"

namespace spmvd {

EllCooSplit ell_coo_split(const MatrixFeatures& features, std::int64_t ell_width) {
  if (ell_width < 0) {
    throw_invalid("ell_coo_split: ELL width " + std::to_string(ell_width) + " is negative");
  }
  EllCooSplit split;
  split.ell_entries = features.rows * ell_width;
  // Paper 003 Eqs. 4-5 sum b_i from i = K for the rows that overflow, which counts rows of
  // length exactly K twice; the rows that overflow are those with i > K, as used here.
  for (const RowLengthCount& set : features.distribution) {
    if (set.length <= ell_width) {
      split.ell_nnz += set.length * set.rows;
    } else {
      split.ell_nnz += ell_width * set.rows;
      split.coo_nnz += (set.length - ell_width) * set.rows;
      split.coo_rows += set.rows;
    }
  }
  return split;
}

}  // namespace spmvd
