#include "models/family_model.hpp"

namespace spmvd {

double FamilyModel::entries_per_thread(const MatrixFeatures&, const Candidate&) const {
  return 0.0;
}

std::optional<double> FamilyModel::critical_path_ms(const MatrixFeatures&, const Candidate&,
                                                    const DeviceInfo&) const {
  return std::nullopt;
}

std::optional<FamilyModel::CooPart> FamilyModel::coo_part(const MatrixFeatures&,
                                                          const Candidate&) const {
  return std::nullopt;
}

}  // namespace spmvd
