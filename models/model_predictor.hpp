#pragma once
// Ranks candidates with a ModelSet: the dedicated model of a candidate's format family where
// it is calibrated, the bytes model otherwise.

#include <cstdint>
#include <optional>
#include <string_view>

#include "models/bytes_model.hpp"
#include "models/coo_model.hpp"
#include "models/csr_vector_model.hpp"
#include "models/ell_model.hpp"
#include "models/model_set.hpp"
#include "models/performance_model.hpp"

namespace spmvd {

// Which dedicated model a format uses; `other` for formats without one (sliced ELL, BCE, BRO,
// EHYB, cuSPARSE, ...). The tuner maps each registered format to its family.
enum class ModelFamily { csr_vector, ell, coo, hyb, other };
std::string_view to_string(ModelFamily family) noexcept;

// (floor^4 + ms^4)^(1/4): at least floor_ms, ms itself far above it, strictly increasing in ms.
// floor_ms <= 0 returns ms.
double smooth_floor_ms(double ms, double floor_ms) noexcept;

// The format_bytes record of the candidate's format calibrated with its very parameters (a
// cuSPARSE algorithm, a slice height, a block size), else the format's first; nullptr when the
// format has none.
const FormatBytesCalibration* own_bytes_calibration(const ModelSet& set,
                                                    const Candidate& candidate) noexcept;

class ModelPredictor {
 public:
  explicit ModelPredictor(ModelSet set);
  const ModelSet& model_set() const noexcept { return set_; }

  // The family's model where the set calibrates it (HYB needs both ELL and COO), else the bytes
  // model with matrix_bytes as the format's storage (csr_storage_bytes_estimate when absent).
  // Never less than the set's launch_floor_ms (smooth_floor_ms) unless the model charges the
  // variant's own fixed cost; below L2, times the variant's cache-resident correction.
  // Throws Error(failed_precondition) when neither is calibrated, naming the family, and
  // Error(invalid_argument) when the candidate cannot launch. Thread-safe.
  Prediction predict_ms(ModelFamily family, const MatrixFeatures& features,
                        const Candidate& candidate, const DeviceInfo& device,
                        std::optional<std::uint64_t> matrix_bytes = std::nullopt) const;

 private:
  // randomness: what the CSR vector, COO and bytes models predict at (the matrix's
  // x_gather_randomness, faded to 1 as far as the candidate's cache-resident correction
  // applies: randomness_under_correction). ELL and HYB have no correction and judge locality
  // themselves (x_span_randomness).
  Prediction predict_unfloored_ms(ModelFamily family, const MatrixFeatures& features,
                                  const Candidate& candidate, const DeviceInfo& device,
                                  std::optional<std::uint64_t> matrix_bytes,
                                  double randomness) const;
  // The extra ms of COO row writes beyond the COO fit's (models/row_writes.hpp) at the shared
  // bytes fit's rate; 0 without that fit.
  double coo_row_write_excess_ms(std::int64_t rows, std::int64_t written_rows,
                                 std::int64_t nnz) const noexcept;
  // True where the family's dedicated model is not calibrated and the bytes model stands in.
  bool uses_bytes_model(ModelFamily family) const noexcept;
  ModelSet set_;
  CsrVectorModel csr_vector_;
  EllModel ell_;
  CooModel coo_;
};

}  // namespace spmvd
