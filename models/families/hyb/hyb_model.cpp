#include "models/families/hyb/hyb_model.hpp"

#include <algorithm>

#include "kernels/formats/common/padding_stop_walk.hpp"
#include "kernels/formats/cuda_hyb/cuda_hyb_rules.hpp"
#include "models/df_split.hpp"
#include "models/locality.hpp"

namespace spmvd {

Prediction HybModel::predict_ms(const MatrixFeatures& features, const Candidate& candidate,
                                const DeviceInfo& /*device*/) const {
  return predict_ms(features, candidate, x_span_randomness(features));  // models/locality.hpp
}

Prediction HybModel::predict_ms(const MatrixFeatures& features, const Candidate& candidate,
                                double randomness) const {
  const std::int64_t k = CudaHybRules::params_of(candidate).ell_width;
  const EllCooSplit split = ell_coo_split(features, k);
  // The two kernels run one after the other: times add, and the sum is as uncertain as its
  // least certain part, a little less for the second launch. The ELL kernel runs over every row
  // whatever K (at K = 0 it only applies beta: a launch and y written; the ell family prices a
  // width-0 ELL as its smallest shape), the COO kernel only where entries are left to it
  // (cuda_hyb_operator.cu, launch_coo_segmented).
  // Its ELL part is cuda_ell's kernel over every row cut to K: priced as the ell family prices
  // it, at the walk of those rows and the gathers of the part's non-zeros.
  Prediction total = ell_.predict_walked_ms(k, cut_ell_walked_width(features, k), features.rows,
                                            split.ell_nnz, candidate.launch.block_size, randomness);
  if (split.coo_nnz > 0) {
    const Prediction coo = coo_.predict_nnz_ms(split.coo_nnz, candidate.launch, randomness);
    total.ms += coo.ms;
    total.confidence = std::min(total.confidence, coo.confidence) * 0.9;
  }
  return total;
}

}  // namespace spmvd
