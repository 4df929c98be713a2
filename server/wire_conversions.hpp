#pragma once
// Domain values <-> protobuf messages. Strings meet enums here and nowhere deeper.

#include "core/plan.hpp"
#include "proto/spmvd.pb.h"
#include "db/plan_store.hpp"
#include "server/engine.hpp"
#include "server/rpc_metrics.hpp"

namespace spmvd {

v1::Precision to_wire(Precision p) noexcept;
v1::MatrixInfo to_wire(const MatrixSummary& summary);
v1::PlanInfo to_wire(const Plan& plan, const std::string& device_signature);
v1::StoredPlan to_wire(const StoredPlan& stored);
v1::ResidentMatrixStats to_wire(const ResidentStats& resident);
v1::RpcStats to_wire(const RpcMethodStats& rpc);

// The keys a wire PlanKey names: an empty device is `this_device`, tuner and model version 0
// are `this_tuner_version` and `this_model_version`, an unspecified precision both precisions.
// Throws Error(invalid_argument) for a fingerprint that is not 32 hex digits.
std::vector<PlanKey> from_wire(const v1::PlanKey& key, const std::string& this_device,
                               std::uint32_t this_tuner_version, std::uint32_t this_model_version);

}  // namespace spmvd
