#include "server/wire_conversions.hpp"

#include "core/error.hpp"

namespace spmvd {

v1::Precision to_wire(Precision p) noexcept { return p == Precision::fp32 ? v1::FP32 : v1::FP64; }

v1::MatrixInfo to_wire(const MatrixSummary& s) {
  v1::MatrixInfo info;
  info.set_handle(s.handle);
  info.set_rows(s.rows);
  info.set_cols(s.cols);
  info.set_nnz(s.nnz);
  info.set_precision(to_wire(s.precision));
  info.set_fingerprint(s.fingerprint.hex());
  info.set_name(s.name);
  return info;
}

v1::PlanInfo to_wire(const Plan& plan, const std::string& device_signature) {
  v1::PlanInfo info;
  info.set_format_id(plan.format.value);
  info.set_format(plan.format_name);
  info.set_params(to_string(plan.params));
  info.set_launch(to_string(plan.launch));
  info.set_predicted_ms(plan.predicted_ms);
  info.set_measured_ms(plan.measured_ms);
  info.set_candidates_measured(plan.candidates_measured);
  info.set_tuner_version(plan.tuner_version);
  info.set_device(device_signature);
  info.set_plan_json(plan_to_json(plan));
  const TuningRecord& t = plan.tuning;
  const auto eq = [&](double ms) { return spmv_equivalents(ms, plan.measured_ms); };
  v1::TuningInfo& tuning = *info.mutable_tuning();
  tuning.set_mode(std::string(to_string(t.mode)));
  tuning.set_k(t.k);
  tuning.set_expected_multiplies(t.expected_multiplies);
  tuning.set_budget_ms(t.budget_ms);
  tuning.set_features_ms(t.cost.features_ms);
  tuning.set_ranking_ms(t.cost.ranking_ms);
  tuning.set_builds_ms(t.cost.builds_ms);
  tuning.set_measurements_ms(t.cost.measurements_ms);
  tuning.set_total_ms(t.cost.total_ms);
  tuning.set_features_spmv(eq(t.cost.features_ms));
  tuning.set_ranking_spmv(eq(t.cost.ranking_ms));
  tuning.set_builds_spmv(eq(t.cost.builds_ms));
  tuning.set_measurements_spmv(eq(t.cost.measurements_ms));
  tuning.set_total_spmv(eq(t.cost.total_ms));
  return info;
}

v1::StoredPlan to_wire(const StoredPlan& stored) {
  v1::StoredPlan out;
  out.set_fingerprint(stored.key.fingerprint.hex());
  out.set_device(stored.key.device_signature);
  out.set_precision(to_wire(stored.key.precision));
  out.set_tuner_version(stored.key.tuner_version);
  out.set_model_version(stored.key.model_version);
  *out.mutable_plan() = to_wire(stored.plan, stored.key.device_signature);
  out.set_updated_unix_ms(stored.updated_ms);
  return out;
}

v1::ResidentMatrixStats to_wire(const ResidentStats& resident) {
  v1::ResidentMatrixStats out;
  *out.mutable_matrix() = to_wire(resident.summary);
  out.set_device_bytes(resident.device_bytes);
  out.set_format(resident.format);
  return out;
}

v1::RpcStats to_wire(const RpcMethodStats& rpc) {
  v1::RpcStats out;
  out.set_method(rpc.method);
  out.set_calls(rpc.calls);
  out.set_errors(rpc.errors);
  out.set_mean_ms(rpc.calls ? 1000.0 * rpc.latency_sum_s / static_cast<double>(rpc.calls) : 0.0);
  out.set_max_ms(1000.0 * rpc.latency_max_s);
  out.set_received_bytes(rpc.received_bytes);
  return out;
}

std::vector<PlanKey> from_wire(const v1::PlanKey& key, const std::string& this_device,
                               std::uint32_t this_tuner_version, std::uint32_t this_model_version) {
  const auto fingerprint = fingerprint_from_hex(key.fingerprint());
  if (!fingerprint)
    throw_invalid("fingerprint '" + key.fingerprint() + "' is not 32 hex digits");
  PlanKey decoded{*fingerprint, key.device().empty() ? this_device : key.device(),
                  Precision::fp64, key.tuner_version() ? key.tuner_version() : this_tuner_version,
                  key.model_version() ? key.model_version() : this_model_version};
  std::vector<PlanKey> keys;
  for (const Precision p : {Precision::fp32, Precision::fp64}) {
    if (key.precision() != v1::PRECISION_UNSPECIFIED && to_wire(p) != key.precision()) continue;
    decoded.precision = p;
    keys.push_back(decoded);
  }
  if (keys.empty()) throw_invalid("precision " + std::to_string(key.precision()) + " is not FP32 or FP64");
  return keys;
}

}  // namespace spmvd
