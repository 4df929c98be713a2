#pragma once
#include <memory>

#include "models/family_model.hpp"

namespace spmvd {

// The set's EllRecord (ell_record.hpp); calibrated where it has a variant.
std::unique_ptr<FamilyModel> make_ell_family(const ModelSet& set);

}  // namespace spmvd
