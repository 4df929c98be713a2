#include "kernels/format_rules.hpp"

#include <algorithm>
#include <string>
#include <utility>

namespace spmvd {

bool FormatRules::is_valid(const Candidate& candidate, const MatrixFeatures& features,
                           const DeviceInfo& device) const {
  // A stored plan is trusted only if this build would still propose it for this matrix on this
  // device (MIOpen's IsValidPerformanceConfig): a format whose space changed drops old plans.
  const std::vector<Candidate> space = candidates(features, device);
  return std::find(space.begin(), space.end(), candidate) != space.end();
}

std::optional<FieldSet> FormatRules::own_features(const CsrMatrix<double>&,
                                                  const MatrixFeatures&) const {
  return std::nullopt;
}

std::optional<ThoroughOwnFeatures> FormatRules::thorough_own_features(
    const CsrMatrix<double>&, const MatrixFeatures&) const {
  return std::nullopt;
}

std::optional<FieldSet> own_features_at(
    const FormatRules& rules, const CsrMatrix<double>& matrix, const MatrixFeatures& common,
    FeatureEffort effort, std::vector<std::shared_ptr<const PlanPartition>>* partitions) {
  if (effort == FeatureEffort::thorough) {
    if (std::optional<ThoroughOwnFeatures> own = rules.thorough_own_features(matrix, common)) {
      if (partitions != nullptr)
        partitions->insert(partitions->end(), own->partitions.begin(), own->partitions.end());
      return std::move(own->features);
    }
  }
  return rules.own_features(matrix, common);
}

void add_own_features(const FormatRules& rules, const CsrMatrix<double>& matrix,
                      MatrixFeatures& features, FeatureEffort effort) {
  if (std::optional<FieldSet> own = own_features_at(rules, matrix, features, effort))
    features.format_features[std::string(rules.name())] = std::move(*own);
}

double FormatRules::gather_sectors_per_nonzero(const MatrixFeatures& features,
                                               const Candidate&) const {
  return features.x_sectors_per_nonzero;
}

std::vector<FormatPart> FormatRules::parts(const MatrixFeatures&, const Candidate&) const {
  return {};
}

std::vector<Candidate> FormatRules::candidates_chosen_by(const PartTimePredictor&,
                                                         const MatrixFeatures& features,
                                                         const DeviceInfo& device) const {
  return candidates(features, device);
}

std::vector<Candidate> FormatRules::row_block_candidates(const MatrixFeatures&,
                                                         const DeviceInfo&) const {
  return {};
}

}  // namespace spmvd
