#pragma once
// The administrative gRPC service (spmvctl): calibration with streamed progress, the stored
// performance models and their measured refit, the plan cache (list, show, delete, export, import), the format
// registry, and the daemon's statistics. Every method first checks the admin token
// (server/token_auth.hpp), then decodes, calls, encodes.

#include "db/store_stats.hpp"
#include "kernels/format_registry.hpp"
#include "proto/spmvd.grpc.pb.h"
#include "server/engine.hpp"
#include "server/rpc_metrics.hpp"
#include "server/token_auth.hpp"

namespace spmvd {

class AdminService final : public v1::Admin::Service {
 public:
  AdminService(Engine& engine, PlanStore& plans, const StoreStats& store_stats,
               const FormatRegistry& registry, const RpcMetrics& rpc_metrics, ServiceGuard guard)
      : engine_(engine),
        plans_(plans),
        store_stats_(store_stats),
        registry_(registry),
        rpc_metrics_(rpc_metrics),
        guard_(std::move(guard)) {}

  grpc::Status Calibrate(grpc::ServerContext* context, const v1::CalibrateRequest* request,
                         grpc::ServerWriter<v1::CalibrateProgress>* writer) override;
  grpc::Status ShowModels(grpc::ServerContext* context, const v1::ShowModelsRequest* request,
                          v1::ShowModelsReply* reply) override;
  grpc::Status RefitModels(grpc::ServerContext* context, const v1::RefitModelsRequest* request,
                           v1::RefitModelsReply* reply) override;
  grpc::Status ListPlans(grpc::ServerContext* context, const v1::ListPlansRequest* request,
                         v1::ListPlansReply* reply) override;
  grpc::Status GetPlan(grpc::ServerContext* context, const v1::GetPlanRequest* request,
                       v1::GetPlanReply* reply) override;
  grpc::Status DeletePlan(grpc::ServerContext* context, const v1::DeletePlanRequest* request,
                          v1::DeletePlanReply* reply) override;
  grpc::Status ExportPlans(grpc::ServerContext* context, const v1::ExportPlansRequest* request,
                           grpc::ServerWriter<v1::PlanLine>* writer) override;
  grpc::Status ImportPlans(grpc::ServerContext* context, grpc::ServerReader<v1::PlanLine>* reader,
                           v1::ImportPlansReply* reply) override;
  grpc::Status ListFormats(grpc::ServerContext* context, const v1::ListFormatsRequest* request,
                           v1::ListFormatsReply* reply) override;
  grpc::Status GetStats(grpc::ServerContext* context, const v1::GetStatsRequest* request,
                        v1::GetStatsReply* reply) override;

 private:
  Engine& engine_;
  PlanStore& plans_;
  const StoreStats& store_stats_;
  const FormatRegistry& registry_;
  const RpcMetrics& rpc_metrics_;
  ServiceGuard guard_;
};

}  // namespace spmvd
