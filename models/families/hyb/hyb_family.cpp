// The hyb family: paper 004's HYB = its ELL part (the ell family's grid) + its COO part (the
// coo family's line), for cuda_hyb. Calibrated where both are.

#include "models/families/hyb/hyb_family.hpp"

#include "kernels/formats/cuda_hyb/cuda_hyb_rules.hpp"
#include "models/df_split.hpp"
#include "models/families/coo/coo_record.hpp"
#include "models/families/ell/ell_record.hpp"
#include "models/families/hyb/hyb_model.hpp"

namespace spmvd {
namespace {

class HybFamily final : public FamilyModel {
 public:
  HybFamily(const EllRecord* ell, const CooRecord* coo)
      : ell_(ell != nullptr ? ell->variants : std::vector<EllCalibration>{}),
        coo_(coo != nullptr ? coo->variants : std::vector<CooCalibration>{}),
        calibrated_(ell != nullptr && !ell->variants.empty() && coo != nullptr &&
                    !coo->variants.empty()) {}
  std::string_view name() const noexcept override { return "hyb"; }
  bool calibrated() const noexcept override { return calibrated_; }
  Prediction predict_ms(const PredictionInput& in) const override {
    // Its ELL part's grid carries the launch's own floor (ell_family.cpp); so does its sum.
    Prediction p = HybModel(ell_, coo_).predict_ms(in.features, in.candidate, in.span_randomness);
    p.includes_fixed_cost = true;
    return p;
  }
  std::optional<CooPart> coo_part(const MatrixFeatures& features,
                                  const Candidate& candidate) const override {
    const EllCooSplit split = ell_coo_split(features, CudaHybRules::params_of(candidate).ell_width);
    return CooPart{.written_rows = split.coo_rows, .nnz = split.coo_nnz};
  }

 private:
  EllModel ell_;
  CooModel coo_;
  bool calibrated_ = false;
};

}  // namespace

std::unique_ptr<FamilyModel> make_hyb_family(const ModelSet& set) {
  return std::make_unique<HybFamily>(set.records.find<EllRecord>(), set.records.find<CooRecord>());
}

}  // namespace spmvd
