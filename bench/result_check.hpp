#pragma once
// The correctness check of spmv-bench (sweep.hpp): a double-precision reference of y = A*x
// for one precision, and a per-row error bound
//
//   |y_r - y_ref_r| <= 2 * gamma(len_r + 2) * sum_k |a_rk x_k|,  gamma(n) = n*u / (1 - n*u)
//
// with u the unit roundoff of the precision (Higham, Accuracy and Stability of Numerical
// Algorithms, 2nd ed., Eq. 3.5: holds for any summation order, so for tree and segmented
// reductions too; the factor 2 covers the rounding of the products). Non-finite y fails.

#include <cstdint>
#include <string>
#include <vector>

#include "core/csr_matrix.hpp"
#include "core/precision.hpp"

namespace spmvd {

struct SpmvReference {
  std::vector<double> x;      // cols entries, uniform in [-1, 1) and rounded to the precision
  std::vector<double> y;      // reference_spmv of the matrix with values rounded to the precision
  std::vector<double> bound;  // allowed |error| per row
};

// O(nnz); for fp32 makes one fp32 copy of the matrix.
SpmvReference make_spmv_reference(const CsrMatrix<double>& m, Precision precision, std::uint64_t seed);

struct CheckOutcome {
  double max_error_ratio = 0.0;  // max over rows |error| / bound (0/0 counts as 0)
  std::int64_t wrong_rows = 0;
  std::string message;  // first wrong row ("row 3: got nan, expected 0.25 (allowed error 1e-16)")
  bool passed() const noexcept { return wrong_rows == 0; }
};

// y holds values of the precision (float or double), rows entries.
template <typename Value>
CheckOutcome check_spmv_result(const std::vector<Value>& y, const SpmvReference& reference);

}  // namespace spmvd
