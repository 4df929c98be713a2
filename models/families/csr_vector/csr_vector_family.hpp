#pragma once
#include <memory>

#include "models/family_model.hpp"

namespace spmvd {

// ModelSet::csr_vector's records; calibrated where there is one.
std::unique_ptr<FamilyModel> make_csr_vector_family(const ModelSet& set);

}  // namespace spmvd
