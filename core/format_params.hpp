#pragma once
// A format's own parameters as a Candidate and a Plan hold them: the FieldSet of the struct the
// format declares in its folder (beside its rules, kernels/formats/<name>/<name>_rules.hpp), e.g.
//   Candidate{.format = kCudaSellFormatId,
//             .params = FormatParams::of(CudaSellParams{.slice_height = 32, .sort_window = 256})}
// and read back with params.as<CudaSellParams>("cuda_sell"). Formats without parameters hold
// an empty set.

#include "core/field_set.hpp"

namespace spmvd {

using FormatParams = FieldSet;

}  // namespace spmvd
