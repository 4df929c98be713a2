#pragma once
// Client of spmvd's Admin service (spmvctl): calibration, models, the plan cache, formats and
// statistics. Every call carries the admin token of its ConnectionOptions; failures throw
// RpcError with the daemon's status code and message.

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "client/connection.hpp"
#include "proto/spmvd.grpc.pb.h"

namespace spmvd {

class AdminClient {
 public:
  explicit AdminClient(const std::string& address, ConnectionOptions connection = {});

  // Blocks until calibration finishes; on_progress sees every streamed message. Throws RpcError.
  void calibrate(const std::function<void(const v1::CalibrateProgress&)>& on_progress);
  v1::ShowModelsReply show_models();
  v1::RefitModelsReply refit_models();
  std::vector<v1::StoredPlan> list_plans(std::uint32_t limit);
  std::vector<v1::StoredPlan> get_plan(const v1::PlanKey& key);
  std::uint32_t delete_plan(const v1::PlanKey& key);
  // Calls on_line for each exported JSON line, in the daemon's order (most recent first).
  void export_plans(const std::function<void(const v1::PlanLine&)>& on_line);
  // Streams the lines; next() fills the next line and returns false at the end.
  v1::ImportPlansReply import_plans(const std::function<bool(v1::PlanLine&)>& next);
  v1::ListFormatsReply list_formats();
  v1::GetStatsReply get_stats();

 private:
  ConnectionOptions connection_;
  std::unique_ptr<v1::Admin::Stub> stub_;
};

}  // namespace spmvd
