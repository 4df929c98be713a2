#include "server/admin_service.hpp"

#include <chrono>

#include "models/model_set.hpp"
#include "server/status_mapping.hpp"
#include "server/wire_conversions.hpp"

namespace spmvd {

grpc::Status AdminService::Calibrate(grpc::ServerContext*, const v1::CalibrateRequest*,
                                     grpc::ServerWriter<v1::CalibrateProgress>* writer) {
  return run_and_map_errors([&] {
    const auto start = std::chrono::steady_clock::now();
    const auto elapsed_s = [&] {
      return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    };
    std::uint64_t last_total = 0;
    engine_.calibrate([&](const CalibrationProgress& p) {
      v1::CalibrateProgress message;
      message.set_stage(p.stage);
      message.set_done(p.done);
      message.set_total(p.total);
      message.set_elapsed_s(elapsed_s());
      message.set_detail(p.detail);
      last_total = p.total;
      writer->Write(message);  // a client that went away does not stop the calibration
    });
    v1::CalibrateProgress done;
    done.set_stage("stored");
    done.set_done(last_total);
    done.set_total(last_total);
    done.set_finished(true);
    done.set_elapsed_s(elapsed_s());
    writer->Write(done);
  });
}

grpc::Status AdminService::ShowModels(grpc::ServerContext*, const v1::ShowModelsRequest*,
                                      v1::ShowModelsReply* reply) {
  return run_and_map_errors([&] {
    reply->set_device(engine_.device_info().signature());
    reply->set_model_version(kModelVersion);
    const auto json = engine_.calibration_json();
    reply->set_calibrated(json.has_value());
    if (json) reply->set_calibration_json(*json);
  });
}

grpc::Status AdminService::ListPlans(grpc::ServerContext*, const v1::ListPlansRequest* request,
                                     v1::ListPlansReply* reply) {
  return run_and_map_errors([&] {
    const std::size_t limit = request->limit() ? request->limit() : 100;
    for (const StoredPlan& stored : plans_.list(limit)) {
      auto* out = reply->add_plans();
      out->set_fingerprint(stored.key.fingerprint.hex());
      out->set_device(stored.key.device_signature);
      out->set_precision(to_wire(stored.key.precision));
      out->set_tuner_version(stored.key.tuner_version);
      *out->mutable_plan() = to_wire(stored.plan, stored.key.device_signature);
      out->set_updated_unix_ms(stored.updated_ms);
    }
  });
}

}  // namespace spmvd
