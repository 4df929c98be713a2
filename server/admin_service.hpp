#pragma once
// The administrative gRPC service (spmvctl): calibration with streamed progress, the stored
// performance models, the plan cache. Decode, call the engine, encode.

#include "proto/spmvd.grpc.pb.h"
#include "server/engine.hpp"

namespace spmvd {

class AdminService final : public v1::Admin::Service {
 public:
  AdminService(Engine& engine, PlanStore& plans) : engine_(engine), plans_(plans) {}

  grpc::Status Calibrate(grpc::ServerContext* context, const v1::CalibrateRequest* request,
                         grpc::ServerWriter<v1::CalibrateProgress>* writer) override;
  grpc::Status ShowModels(grpc::ServerContext* context, const v1::ShowModelsRequest* request,
                          v1::ShowModelsReply* reply) override;
  grpc::Status ListPlans(grpc::ServerContext* context, const v1::ListPlansRequest* request,
                         v1::ListPlansReply* reply) override;

 private:
  Engine& engine_;
  PlanStore& plans_;
};

}  // namespace spmvd
