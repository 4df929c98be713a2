// The coo family: paper 004's COO line (coo_model.hpp), for cuda_coo and (calibrated on the
// CPU device) cpu_coo.

#include "models/families/coo/coo_family.hpp"

#include "models/families/coo/coo_model.hpp"
#include "models/families/coo/coo_record.hpp"

namespace spmvd {
namespace {

class CooFamily final : public FamilyModel {
 public:
  explicit CooFamily(const CooRecord* record)
      : model_(record != nullptr ? record->variants : std::vector<CooCalibration>{}),
        calibrated_(record != nullptr && !record->variants.empty()) {}
  std::string_view name() const noexcept override { return CooRecord::kFamily; }
  bool calibrated() const noexcept override { return calibrated_; }
  Prediction predict_ms(const PredictionInput& in) const override {
    return model_.predict_nnz_ms(in.features.nnz, in.candidate.launch, in.gather_randomness);
  }
  double entries_per_thread(const MatrixFeatures& features,
                            const Candidate& candidate) const override {
    return coo_entries_per_thread(features.nnz, candidate.launch);
  }
  std::optional<CooPart> coo_part(const MatrixFeatures& features, const Candidate&) const override {
    return CooPart{.written_rows = features.rows - features.empty_rows, .nnz = features.nnz};
  }

 private:
  CooModel model_;
  bool calibrated_ = false;
};

}  // namespace

std::unique_ptr<FamilyModel> make_coo_family(const ModelSet& set) {
  return std::make_unique<CooFamily>(set.records.find<CooRecord>());
}

}  // namespace spmvd
