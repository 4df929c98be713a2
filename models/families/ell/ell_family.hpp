#pragma once
#include <memory>

#include "models/family_model.hpp"

namespace spmvd {

// ModelSet::ell's records; calibrated where there is one.
std::unique_ptr<FamilyModel> make_ell_family(const ModelSet& set);

}  // namespace spmvd
