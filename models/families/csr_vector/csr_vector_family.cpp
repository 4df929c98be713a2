// The csr_vector family: paper 004's CSR-vector model (csr_vector_model.hpp), for
// cuda_csr_vector (2-32 lanes per row) and cuda_csr_scalar (its 1-lane variant).

#include "models/families/csr_vector/csr_vector_family.hpp"

#include "models/families/csr_vector/csr_vector_model.hpp"
#include "models/families/csr_vector/csr_vector_record.hpp"

namespace spmvd {
namespace {

std::vector<CsrVectorCalibration> variants_of(const ModelSet& set) {
  const CsrVectorRecord* record = set.records.find<CsrVectorRecord>();
  return record != nullptr ? record->variants : std::vector<CsrVectorCalibration>{};
}

class CsrVectorFamily final : public FamilyModel {
 public:
  explicit CsrVectorFamily(const ModelSet& set)
      : CsrVectorFamily(variants_of(set), set.precision) {}
  CsrVectorFamily(std::vector<CsrVectorCalibration> variants, Precision precision)
      : calibrated_(!variants.empty()), model_(std::move(variants), precision) {}
  std::string_view name() const noexcept override { return CsrVectorRecord::kFamily; }
  bool calibrated() const noexcept override { return calibrated_; }
  Prediction predict_ms(const PredictionInput& in) const override {
    return model_.predict_ms(in.features, in.candidate, in.device, in.gather_randomness);
  }
  std::optional<double> critical_path_ms(const MatrixFeatures& features, const Candidate& candidate,
                                         const DeviceInfo& device) const override {
    return model_.critical_path_ms(features, candidate, device);
  }

 private:
  bool calibrated_ = false;
  CsrVectorModel model_;
};

}  // namespace

std::unique_ptr<FamilyModel> make_csr_vector_family(const ModelSet& set) {
  return std::make_unique<CsrVectorFamily>(set);
}

}  // namespace spmvd
