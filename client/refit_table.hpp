#pragma once
// `spmvctl model refit` for people: the daemon's RefitModelsReply as one table per precision,
// the held-out accuracy per format before and after the refit, then the top-1 agreement and
// the verdict (installed, or why refused).

#include <string>

#include "proto/spmvd.pb.h"

namespace spmvd {

// Pure; relative errors in %, factors to 3 decimals. O(size of the reply).
std::string refit_tables(const v1::RefitModelsReply& reply);

}  // namespace spmvd
