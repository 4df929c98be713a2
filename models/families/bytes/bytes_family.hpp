#pragma once
#include <memory>

#include "models/families/bytes/bytes_record.hpp"
#include "models/family_model.hpp"

namespace spmvd {

// The set's BytesRecord (bytes_record.hpp); calibrated where it has the shared fit or a
// format's. Keeps a reference: the set must outlive the family (ModelPredictor owns both).
std::unique_ptr<FamilyModel> make_bytes_family(const ModelSet& set);

// The format_bytes record of the candidate's format calibrated with its very parameters (a
// cuSPARSE algorithm, a slice height, a block size), else the format's record sharing the most
// parameter values with the candidate (the first of equals); nullptr when the format has none.
const FormatBytesCalibration* own_bytes_calibration(const ModelSet& set,
                                                    const Candidate& candidate) noexcept;

}  // namespace spmvd
