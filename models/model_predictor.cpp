#include "models/model_predictor.hpp"

#include <string>

#include "core/error.hpp"
#include "models/hyb_model.hpp"

namespace spmvd {

std::string_view to_string(ModelFamily family) noexcept {
  switch (family) {
    case ModelFamily::csr_vector: return "csr_vector";
    case ModelFamily::ell: return "ell";
    case ModelFamily::coo: return "coo";
    case ModelFamily::hyb: return "hyb";
    case ModelFamily::other: return "other";
  }
  return "unknown";
}

ModelPredictor::ModelPredictor(ModelSet set)
    : set_(std::move(set)), csr_vector_(set_.csr_vector), ell_(set_.ell), coo_(set_.coo) {}

Prediction ModelPredictor::predict_ms(ModelFamily family, const MatrixFeatures& features,
                                      const Candidate& candidate, const DeviceInfo& device,
                                      std::optional<std::uint64_t> matrix_bytes) const {
  switch (family) {
    case ModelFamily::csr_vector:
      if (!set_.csr_vector.empty()) return csr_vector_.predict_ms(features, candidate, device);
      break;
    case ModelFamily::ell:
      if (!set_.ell.empty()) return ell_.predict_ms(features, candidate, device);
      break;
    case ModelFamily::coo:
      if (!set_.coo.empty()) return coo_.predict_ms(features, candidate, device);
      break;
    case ModelFamily::hyb:
      if (!set_.ell.empty() && !set_.coo.empty()) {
        return HybModel(ell_, coo_).predict_ms(features, candidate, device);
      }
      break;
    case ModelFamily::other:
      break;
  }
  if (!set_.bytes) {
    throw Error(ErrorCode::failed_precondition,
                "no calibrated model for format family " + std::string(to_string(family)) +
                    " and no bytes model to fall back on");
  }
  StorageBytesFn storage;
  if (matrix_bytes) {
    storage = [bytes = *matrix_bytes](const MatrixFeatures&, const Candidate&) { return bytes; };
  }
  return BytesModel(*set_.bytes, set_.precision, std::move(storage))
      .predict_ms(features, candidate, device);
}

}  // namespace spmvd
