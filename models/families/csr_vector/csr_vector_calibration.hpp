#pragma once
// The csr_vector calibration stage (paper 004 Fig. 3 and 4, Sec. 4.3.1): its sample plan (for
// every threads_per_row t, 1 = cuda_csr_scalar and 2-32 = cuda_csr_vector, and block size,
// samples of S strips of one wave of resident blocks, every row of one length c), the launch
// it times them with, and the fit of its records (CsrVectorCalibration, completed by the
// latency stage's fixed cost and critical-path steps).

#include <cstdint>

#include "models/calibration/stage.hpp"
#include "models/families/csr_vector/csr_vector_record.hpp"

namespace spmvd {

// A CSR-vector banded ratio net of the launch's fixed cost F (CsrVectorCalibration::fixed_ms):
// (T_banded - F) / (T_random - F), since the model charges F once and scales only the per-row
// shares by the locality factor; the plain ratio where T_random <= F (nothing to net).
double banded_ratio_net_of_fixed_cost(double banded_ms, double random_ms, double fixed_ms) noexcept;

// Row lengths whose csr_vector samples get a banded twin (ELL's widths: kBandedEllWidths):
// around the 5-30 entries per row of stencil and FEM matrices, and a short and a long end.
inline constexpr std::int64_t kBandedCsrRowLengths[] = {2, 8, 32};

// The stage's entry in calibration_stages().
CalibrationStageSpec csr_vector_stage();

// The launch the format's own rules produce for a csr_vector (or latency) variant's sample: one
// wave of blocks, grid-stride beyond.
Candidate csr_vector_candidate(const PlannedVariant& v, const SampleShape& shape,
                               const MatrixFeatures& features, const FormatRegistry& registry,
                               const DeviceInfo& device);

}  // namespace spmvd
