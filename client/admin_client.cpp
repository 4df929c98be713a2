#include "client/admin_client.hpp"

#include <grpcpp/grpcpp.h>

#include "client/spmv_client.hpp"

namespace spmvd {

AdminClient::AdminClient(const std::string& address) {
  grpc::ChannelArguments arguments;
  arguments.SetMaxReceiveMessageSize(256 << 20);  // a calibration with its samples
  stub_ = v1::Admin::NewStub(
      grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), arguments));
}

void AdminClient::calibrate(const std::function<void(const v1::CalibrateProgress&)>& on_progress) {
  grpc::ClientContext context;
  auto reader = stub_->Calibrate(&context, {});
  v1::CalibrateProgress progress;
  while (reader->Read(&progress)) on_progress(progress);
  const grpc::Status status = reader->Finish();
  if (!status.ok()) throw RpcError(status.error_code(), status.error_message());
}

v1::ShowModelsReply AdminClient::show_models() {
  grpc::ClientContext context;
  v1::ShowModelsReply reply;
  const grpc::Status status = stub_->ShowModels(&context, {}, &reply);
  if (!status.ok()) throw RpcError(status.error_code(), status.error_message());
  return reply;
}

std::vector<v1::StoredPlan> AdminClient::list_plans(std::uint32_t limit) {
  grpc::ClientContext context;
  v1::ListPlansRequest request;
  request.set_limit(limit);
  v1::ListPlansReply reply;
  const grpc::Status status = stub_->ListPlans(&context, request, &reply);
  if (!status.ok()) throw RpcError(status.error_code(), status.error_message());
  return {reply.plans().begin(), reply.plans().end()};
}

}  // namespace spmvd
