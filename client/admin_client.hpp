#pragma once
// Client of spmvd's Admin service (spmvctl): calibration, models, the plan cache.

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "proto/spmvd.grpc.pb.h"

namespace spmvd {

class AdminClient {
 public:
  explicit AdminClient(const std::string& address);

  // Blocks until calibration finishes; on_progress sees every streamed message. Throws RpcError.
  void calibrate(const std::function<void(const v1::CalibrateProgress&)>& on_progress);
  v1::ShowModelsReply show_models();
  std::vector<v1::StoredPlan> list_plans(std::uint32_t limit);

 private:
  std::unique_ptr<v1::Admin::Stub> stub_;
};

}  // namespace spmvd
