#pragma once
// Timing of one built sample on its device, as every calibration stage times it.

#include "core/csr_matrix.hpp"
#include "core/precision.hpp"
#include "kernels/device.hpp"
#include "kernels/spmv_operator.hpp"
#include "models/calibration/calibration_plan.hpp"

namespace spmvd {

// Median of individually timed applies, y = A x (beta = 0, as spmv-bench times them):
// o.warmup_runs untimed, then o.timed_runs timed (101 where their median is below 0.05 ms).
// Allocates x and y on `device`; throws what the device throws.
double median_apply_ms(SpmvOperator& op, Device& device, const CsrMatrix<double>& sample,
                       Precision precision, const CalibrationOptions& o);

}  // namespace spmvd
