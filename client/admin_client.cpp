#include "client/admin_client.hpp"

#include <grpcpp/grpcpp.h>

#include "client/spmv_client.hpp"

namespace spmvd {
namespace {

void throw_if_failed(const grpc::Status& status) {
  if (!status.ok()) throw RpcError(status.error_code(), status.error_message());
}

}  // namespace

AdminClient::AdminClient(const std::string& address, ConnectionOptions connection)
    : connection_(std::move(connection)) {
  grpc::ChannelArguments arguments;
  arguments.SetMaxReceiveMessageSize(256 << 20);  // a calibration with its samples
  stub_ = v1::Admin::NewStub(open_channel(address, connection_, arguments));
}

void AdminClient::calibrate(const std::function<void(const v1::CalibrateProgress&)>& on_progress) {
  grpc::ClientContext context;
  authorize(context, connection_);
  auto reader = stub_->Calibrate(&context, {});
  v1::CalibrateProgress progress;
  while (reader->Read(&progress)) on_progress(progress);
  throw_if_failed(reader->Finish());
}

v1::ShowModelsReply AdminClient::show_models() {
  grpc::ClientContext context;
  authorize(context, connection_);
  v1::ShowModelsReply reply;
  throw_if_failed(stub_->ShowModels(&context, {}, &reply));
  return reply;
}

v1::RefitModelsReply AdminClient::refit_models() {
  grpc::ClientContext context;
  authorize(context, connection_);
  v1::RefitModelsReply reply;
  throw_if_failed(stub_->RefitModels(&context, {}, &reply));
  return reply;
}

std::vector<v1::StoredPlan> AdminClient::list_plans(std::uint32_t limit) {
  grpc::ClientContext context;
  authorize(context, connection_);
  v1::ListPlansRequest request;
  request.set_limit(limit);
  v1::ListPlansReply reply;
  throw_if_failed(stub_->ListPlans(&context, request, &reply));
  return {reply.plans().begin(), reply.plans().end()};
}

std::vector<v1::StoredPlan> AdminClient::get_plan(const v1::PlanKey& key) {
  grpc::ClientContext context;
  authorize(context, connection_);
  v1::GetPlanRequest request;
  *request.mutable_key() = key;
  v1::GetPlanReply reply;
  throw_if_failed(stub_->GetPlan(&context, request, &reply));
  return {reply.plans().begin(), reply.plans().end()};
}

std::uint32_t AdminClient::delete_plan(const v1::PlanKey& key) {
  grpc::ClientContext context;
  authorize(context, connection_);
  v1::DeletePlanRequest request;
  *request.mutable_key() = key;
  v1::DeletePlanReply reply;
  throw_if_failed(stub_->DeletePlan(&context, request, &reply));
  return reply.deleted();
}

void AdminClient::export_plans(const std::function<void(const v1::PlanLine&)>& on_line) {
  grpc::ClientContext context;
  authorize(context, connection_);
  auto reader = stub_->ExportPlans(&context, {});
  v1::PlanLine line;
  while (reader->Read(&line)) on_line(line);
  throw_if_failed(reader->Finish());
}

v1::ImportPlansReply AdminClient::import_plans(const std::function<bool(v1::PlanLine&)>& next) {
  grpc::ClientContext context;
  authorize(context, connection_);
  v1::ImportPlansReply reply;
  auto writer = stub_->ImportPlans(&context, &reply);
  v1::PlanLine line;
  // A failed Write means the daemon already ended the call: Finish() has its status.
  while (next(line) && writer->Write(line)) {
  }
  writer->WritesDone();
  throw_if_failed(writer->Finish());
  return reply;
}

v1::ListFormatsReply AdminClient::list_formats() {
  grpc::ClientContext context;
  authorize(context, connection_);
  v1::ListFormatsReply reply;
  throw_if_failed(stub_->ListFormats(&context, {}, &reply));
  return reply;
}

v1::GetStatsReply AdminClient::get_stats() {
  grpc::ClientContext context;
  authorize(context, connection_);
  v1::GetStatsReply reply;
  throw_if_failed(stub_->GetStats(&context, {}, &reply));
  return reply;
}

}  // namespace spmvd
