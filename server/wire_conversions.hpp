#pragma once
// Domain values <-> protobuf messages. Strings meet enums here and nowhere deeper.

#include "core/plan.hpp"
#include "proto/spmvd.pb.h"
#include "server/engine.hpp"

namespace spmvd {

v1::Precision to_wire(Precision p) noexcept;
v1::MatrixInfo to_wire(const MatrixSummary& summary);
v1::PlanInfo to_wire(const Plan& plan, const std::string& device_signature);

}  // namespace spmvd
