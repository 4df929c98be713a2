#pragma once
#include <memory>

#include "models/family_model.hpp"

namespace spmvd {

// The set's EllRecord and CooRecord; calibrated where both have a variant. Keeps no record
// of its own.
std::unique_ptr<FamilyModel> make_hyb_family(const ModelSet& set);

}  // namespace spmvd
