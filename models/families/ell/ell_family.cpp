// The ell family: paper 004's ELL grid (ell_model.hpp), for cuda_ell.

#include "models/families/ell/ell_family.hpp"

#include "kernels/formats/cuda_ell/cuda_ell_rules.hpp"
#include "models/families/ell/ell_model.hpp"
#include "models/families/ell/ell_record.hpp"

namespace spmvd {
namespace {

class EllFamily final : public FamilyModel {
 public:
  explicit EllFamily(const EllRecord* record)
      : model_(record != nullptr ? record->variants : std::vector<EllCalibration>{}),
        calibrated_(record != nullptr && !record->variants.empty()) {}
  std::string_view name() const noexcept override { return EllRecord::kFamily; }
  bool calibrated() const noexcept override { return calibrated_; }
  // Width: cuda_ell's ell_width, or the longest row for a candidate without parameters (the
  // paper pads every row to the longest).
  Prediction predict_ms(const PredictionInput& in) const override {
    const std::int64_t width =
        in.candidate.params.empty()
            ? in.features.row_length_max
            : static_cast<std::int64_t>(CudaEllRules::params_of(in.candidate).ell_width);
    Prediction p = model_.predict_shape_ms(width, in.features.rows, in.candidate.launch.block_size,
                                           in.span_randomness);
    // The grid holds whole launches measured down to a few thousand rows, where they run at the
    // launch latency, and clamps below them: it carries its own floor. The set's floor on top
    // counted it twice (H100 and H200, 2026-11-23, model-accuracy --without launch_floor on the
    // v12 calibrations: ELL median error 9.3 -> 5.1 % and 7.6 -> 4.5 %).
    p.includes_fixed_cost = true;
    return p;
  }

 private:
  EllModel model_;
  bool calibrated_ = false;
};

}  // namespace

std::unique_ptr<FamilyModel> make_ell_family(const ModelSet& set) {
  return std::make_unique<EllFamily>(set.records.find<EllRecord>());
}

}  // namespace spmvd
