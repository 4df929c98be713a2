#include "server/spmv_service.hpp"

#include "server/status_mapping.hpp"
#include "server/upload_assembler.hpp"
#include "server/wire_conversions.hpp"

namespace spmvd {
namespace {

std::vector<std::vector<double>> to_vectors(
    const google::protobuf::RepeatedPtrField<v1::Vector>& wire) {
  std::vector<std::vector<double>> out;
  out.reserve(static_cast<std::size_t>(wire.size()));
  for (const auto& v : wire) out.emplace_back(v.values().begin(), v.values().end());
  return out;
}

}  // namespace

grpc::Status SpmvService::Upload(grpc::ServerContext* context,
                                 grpc::ServerReader<v1::UploadChunk>* reader,
                                 v1::UploadReply* reply) {
  return run_if_admitted(guard_, *context, [&] {
    UploadAssembler assembler(max_upload_bytes_);
    v1::UploadChunk chunk;
    while (reader->Read(&chunk)) assembler.add(chunk);
    // A client that vanished half way cancels the call: nothing is kept.
    if (context->IsCancelled()) throw Error(ErrorCode::invalid_argument, "upload cancelled by the client");
    UploadedMatrix uploaded = assembler.finish();
    *reply->mutable_matrix() =
        to_wire(engine_.add_matrix(std::move(uploaded.matrix), uploaded.precision,
                                   std::move(uploaded.name), uploaded.expected_multiplies));
  });
}

grpc::Status SpmvService::Tune(grpc::ServerContext* context, const v1::TuneRequest* request,
                               v1::TuneReply* reply) {
  return run_if_admitted(guard_, *context, [&] {
    const TuneOutcome outcome =
        engine_.tune(request->handle(), request->force(), request->expected_multiplies());
    *reply->mutable_plan() = to_wire(outcome.plan, engine_.device_info().signature());
    reply->set_cache_hit(outcome.cache_hit);
    reply->set_tune_ms(outcome.tune_ms);
  });
}

grpc::Status SpmvService::Multiply(grpc::ServerContext* context, const v1::MultiplyRequest* request,
                                   v1::MultiplyReply* reply) {
  return run_if_admitted(guard_, *context, [&] {
    const MultiplyOutcome outcome =
        engine_.multiply(request->handle(), request->alpha(), request->beta(),
                         to_vectors(request->x()), to_vectors(request->y()));
    for (const auto& y : outcome.y) reply->add_y()->mutable_values()->Add(y.begin(), y.end());
    reply->set_device_ms(outcome.device_ms);
    *reply->mutable_plan() = to_wire(outcome.plan, engine_.device_info().signature());
    if (outcome.default_plan) {
      reply->mutable_plan()->clear_tuning();
      reply->mutable_plan()->set_default_plan(true);
    }
  });
}

grpc::Status SpmvService::Release(grpc::ServerContext* context, const v1::ReleaseRequest* request,
                                  v1::ReleaseReply*) {
  return run_if_admitted(guard_, *context, [&] { engine_.release(request->handle()); });
}

grpc::Status SpmvService::ListMatrices(grpc::ServerContext* context, const v1::ListMatricesRequest*,
                                       v1::ListMatricesReply* reply) {
  return run_if_admitted(guard_, *context, [&] {
    for (const auto& m : engine_.list()) *reply->add_matrices() = to_wire(m);
  });
}

}  // namespace spmvd
