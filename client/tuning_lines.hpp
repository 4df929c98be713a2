#pragma once
// How `spmv` and `spmvctl` show what a tuning did and cost (docs/TUNER.md "Cost accounting"):
// plain text from a PlanInfo, tested without a daemon.

#include <string>

#include "proto/spmvd.pb.h"

namespace spmvd {

// One line for tables: "verify-top-k k=4, 12.3 ms = 45 SpMV", or "default (untuned)".
std::string tuning_summary(const v1::PlanInfo& plan);

// The breakdown, one stage a line, each in ms and in SpMV-equivalents of the plan:
//   mode:          verify-top-k (k 4, 4 measured; budget 100 ms for 1000 multiplies)
//   features:      1.000 ms (4 SpMV)
//   ...
//   total:         12.300 ms (45 SpMV)
std::string tuning_breakdown(const v1::PlanInfo& plan);

}  // namespace spmvd
