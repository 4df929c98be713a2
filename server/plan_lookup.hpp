#pragma once
// The plan cache as spmvctl addresses it: by fingerprint, in one or both precisions
// (AdminService GetPlan and DeletePlan).

#include <cstdint>
#include <vector>

#include "db/plan_store.hpp"

namespace spmvd {

// The stored plans under `keys` (created_ms and updated_ms 0: the store's find returns the plan
// only). Throws Error(not_found) naming the fingerprint, device, tuner version and precision(s)
// when none is stored.
std::vector<StoredPlan> find_plans(PlanStore& store, const std::vector<PlanKey>& keys);

// Deletes the plans under `keys`; returns how many were stored.
std::uint32_t erase_plans(PlanStore& store, const std::vector<PlanKey>& keys);

}  // namespace spmvd
