#pragma once
#include <memory>

#include "models/family_model.hpp"

namespace spmvd {

// ModelSet::ell's and ::coo's records; calibrated where both are.
std::unique_ptr<FamilyModel> make_hyb_family(const ModelSet& set);

}  // namespace spmvd
