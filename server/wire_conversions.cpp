#include "server/wire_conversions.hpp"

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
  return info;
}

}  // namespace spmvd
