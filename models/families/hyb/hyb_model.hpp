#pragma once
// HYB model of paper 004 Sec. 4.3.3: the ELL part of width K predicted by the ELL model plus
// the COO remainder predicted by the COO model, both sized from the DF (models/df_split.hpp).

#include "models/families/coo/coo_model.hpp"
#include "models/families/ell/ell_model.hpp"
#include "models/performance_model.hpp"

namespace spmvd {

class HybModel {
 public:
  // Keeps references: ell and coo must outlive this model.
  HybModel(const EllModel& ell, const CooModel& coo) : ell_(ell), coo_(coo) {}
  std::string_view family() const noexcept { return "hyb"; }
  // K = cuda_hyb's ell_width (0: all of the matrix in COO). Throws
  // Error(failed_precondition) when a part it needs has no calibration.
  Prediction predict_ms(const MatrixFeatures& features, const Candidate& candidate,
                        const DeviceInfo& device) const;
  // The same at an explicit x randomness of both parts (1 = the random calibration samples;
  // the three-argument form takes x_span_randomness).
  Prediction predict_ms(const MatrixFeatures& features, const Candidate& candidate,
                        double randomness) const;

 private:
  const EllModel& ell_;
  const CooModel& coo_;
};

}  // namespace spmvd
