#include "server/plan_lookup.hpp"

#include "core/error.hpp"

namespace spmvd {

std::vector<StoredPlan> find_plans(PlanStore& store, const std::vector<PlanKey>& keys) {
  std::vector<StoredPlan> found;
  for (const PlanKey& key : keys)
    if (auto plan = store.find(key)) found.push_back({key, *plan, 0, 0});
  if (found.empty() && !keys.empty()) {
    const PlanKey& key = keys.front();
    throw Error(ErrorCode::not_found,
                "no stored plan for fingerprint " + key.fingerprint.hex() + " on device '" +
                    key.device_signature + "', tuner version " + std::to_string(key.tuner_version) +
                    ", " + (keys.size() > 1 ? "fp32 or fp64" : std::string(to_string(key.precision))));
  }
  return found;
}

std::uint32_t erase_plans(PlanStore& store, const std::vector<PlanKey>& keys) {
  std::uint32_t erased = 0;
  for (const PlanKey& key : keys) erased += store.erase(key) ? 1 : 0;
  return erased;
}

}  // namespace spmvd
