#pragma once
#include <memory>

#include "models/family_model.hpp"

namespace spmvd {

// The set's CsrVectorRecord (csr_vector_record.hpp); calibrated where it has a variant.
std::unique_ptr<FamilyModel> make_csr_vector_family(const ModelSet& set);

}  // namespace spmvd
