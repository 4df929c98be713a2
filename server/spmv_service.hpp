#pragma once
// The gRPC face of the engine: each method decodes the request, calls the engine, encodes the
// reply; errors become statuses in status_mapping.cpp. With an Spmv token configured, every
// call is checked against it first (server/token_auth.hpp).

#include "proto/spmvd.grpc.pb.h"
#include "server/engine.hpp"
#include "server/token_auth.hpp"

namespace spmvd {

class SpmvService final : public v1::Spmv::Service {
 public:
  // guard: the Spmv token every call must carry, or an open guard.
  SpmvService(Engine& engine, std::uint64_t max_upload_bytes, ServiceGuard guard)
      : engine_(engine), max_upload_bytes_(max_upload_bytes), guard_(std::move(guard)) {}

  grpc::Status Upload(grpc::ServerContext* context, grpc::ServerReader<v1::UploadChunk>* reader,
                      v1::UploadReply* reply) override;
  grpc::Status Tune(grpc::ServerContext* context, const v1::TuneRequest* request,
                    v1::TuneReply* reply) override;
  grpc::Status Multiply(grpc::ServerContext* context, const v1::MultiplyRequest* request,
                        v1::MultiplyReply* reply) override;
  grpc::Status Release(grpc::ServerContext* context, const v1::ReleaseRequest* request,
                       v1::ReleaseReply* reply) override;
  grpc::Status ListMatrices(grpc::ServerContext* context, const v1::ListMatricesRequest* request,
                            v1::ListMatricesReply* reply) override;

 private:
  Engine& engine_;
  std::uint64_t max_upload_bytes_;
  ServiceGuard guard_;
};

}  // namespace spmvd
