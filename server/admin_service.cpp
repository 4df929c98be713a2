#include "server/admin_service.hpp"

#include <chrono>

#include "models/model_set.hpp"
#include "server/plan_lines.hpp"
#include "server/plan_lookup.hpp"
#include "server/status_mapping.hpp"
#include "server/wire_conversions.hpp"

namespace spmvd {

grpc::Status AdminService::Calibrate(grpc::ServerContext* context, const v1::CalibrateRequest*,
                                     grpc::ServerWriter<v1::CalibrateProgress>* writer) {
  return run_if_admitted(guard_, *context, [&] {
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

grpc::Status AdminService::ShowModels(grpc::ServerContext* context, const v1::ShowModelsRequest*,
                                      v1::ShowModelsReply* reply) {
  return run_if_admitted(guard_, *context, [&] {
    reply->set_device(engine_.device_info().signature());
    reply->set_model_version(kModelVersion);
    const auto json = engine_.calibration_json();
    reply->set_calibrated(json.has_value());
    if (json) reply->set_calibration_json(*json);
  });
}

grpc::Status AdminService::RefitModels(grpc::ServerContext* context, const v1::RefitModelsRequest*,
                                       v1::RefitModelsReply* reply) {
  return run_if_admitted(guard_, *context, [&] {
    reply->set_device(engine_.device_info().signature());
    for (const PrecisionRefit& refit : engine_.refit_models()) {
      v1::PrecisionRefit& out = *reply->add_precisions();
      const RefitReport& r = refit.report;
      out.set_precision(to_wire(refit.precision));
      out.set_stored_samples(refit.stored_samples);
      out.set_skipped_samples(refit.skipped_samples);
      out.set_fit_samples(r.fit_samples);
      out.set_heldout_samples(r.heldout_samples);
      for (const FormatRefitAccuracy& f : r.formats) {
        v1::RefitFormatAccuracy& row = *out.add_formats();
        row.set_format_id(f.format.value);
        const FormatEntry* entry = registry_.find(f.format);
        row.set_format_name(entry != nullptr ? std::string(entry->rules->name())
                                             : "format " + std::to_string(f.format.value));
        row.set_heldout_samples(f.heldout_samples);
        row.set_median_relative_error_before(f.median_relative_error_before);
        row.set_median_relative_error_after(f.median_relative_error_after);
        row.set_factor_before(f.factor_before);
        row.set_factor_after(f.factor_after);
      }
      out.set_median_relative_error_before(r.median_relative_error_before);
      out.set_median_relative_error_after(r.median_relative_error_after);
      out.set_top1_tunings(r.top1_tunings);
      out.set_top1_agreement_before(r.top1_agreement_before);
      out.set_top1_agreement_after(r.top1_agreement_after);
      out.set_accepted(r.accepted);
      out.set_refusal(r.refusal);
      out.set_installed(refit.installed);
    }
  });
}

grpc::Status AdminService::ListPlans(grpc::ServerContext* context,
                                     const v1::ListPlansRequest* request,
                                     v1::ListPlansReply* reply) {
  return run_if_admitted(guard_, *context, [&] {
    const std::size_t limit = request->limit() ? request->limit() : 100;
    for (const StoredPlan& stored : plans_.list(limit)) *reply->add_plans() = to_wire(stored);
  });
}

grpc::Status AdminService::GetPlan(grpc::ServerContext* context, const v1::GetPlanRequest* request,
                                   v1::GetPlanReply* reply) {
  return run_if_admitted(guard_, *context, [&] {
    const auto keys = from_wire(request->key(), engine_.device_info().signature(), kTunerVersion,
                                kModelVersion);
    for (const StoredPlan& stored : find_plans(plans_, keys)) *reply->add_plans() = to_wire(stored);
  });
}

grpc::Status AdminService::DeletePlan(grpc::ServerContext* context,
                                      const v1::DeletePlanRequest* request,
                                      v1::DeletePlanReply* reply) {
  return run_if_admitted(guard_, *context, [&] {
    const auto keys = from_wire(request->key(), engine_.device_info().signature(), kTunerVersion,
                                kModelVersion);
    reply->set_deleted(erase_plans(plans_, keys));
  });
}

grpc::Status AdminService::ExportPlans(grpc::ServerContext* context, const v1::ExportPlansRequest*,
                                       grpc::ServerWriter<v1::PlanLine>* writer) {
  return run_if_admitted(guard_, *context, [&] {
    v1::PlanLine line;
    std::uint64_t number = 0;
    for (const StoredPlan& stored : plans_.list(SIZE_MAX)) {
      line.set_json(plan_line(stored));
      line.set_line_number(++number);
      if (!writer->Write(line)) return;  // the client went away
    }
  });
}

grpc::Status AdminService::ImportPlans(grpc::ServerContext* context,
                                       grpc::ServerReader<v1::PlanLine>* reader,
                                       v1::ImportPlansReply* reply) {
  return run_if_admitted(guard_, *context, [&] {
    PlanImporter importer(plans_, registry_);
    v1::PlanLine line;
    while (reader->Read(&line)) importer.add(line.line_number(), line.json());
    reply->set_imported(importer.imported());
    for (const auto& problem : importer.problems()) {
      auto* out = reply->add_problems();
      out->set_line_number(problem.line_number);
      out->set_message(problem.message);
    }
  });
}

grpc::Status AdminService::ListFormats(grpc::ServerContext* context, const v1::ListFormatsRequest*,
                                       v1::ListFormatsReply* reply) {
  return run_if_admitted(guard_, *context, [&] {
    const DeviceInfo& device = engine_.device_info();
    reply->set_device(device.signature());
    for (const FormatEntry& entry : registry_.entries()) {
      auto* out = reply->add_formats();
      out->set_id(entry.rules->id().value);
      out->set_name(std::string(entry.rules->name()));
      out->set_needs_gpu(entry.rules->needs_gpu());
      out->set_usable_here(!entry.rules->needs_gpu() || device.is_gpu);
    }
  });
}

grpc::Status AdminService::GetStats(grpc::ServerContext* context, const v1::GetStatsRequest*,
                                    v1::GetStatsReply* reply) {
  return run_if_admitted(guard_, *context, [&] {
    const EngineStats stats = engine_.stats();
    reply->set_device(engine_.device_info().signature());
    reply->set_uptime_s(rpc_metrics_.uptime_s());
    for (const auto& resident : stats.matrices) *reply->add_matrices() = to_wire(resident);
    reply->set_resident_device_bytes(stats.resident_device_bytes);
    reply->set_memory_budget_bytes(stats.memory_budget_bytes);
    for (const auto& rpc : rpc_metrics_.snapshot()) *reply->add_rpcs() = to_wire(rpc);
    reply->set_plan_cache_hits(stats.counters.plan_cache_hits);
    reply->set_plan_cache_misses(stats.counters.plan_cache_misses);
    reply->set_tuning_ms_total(stats.counters.tuning_ms_total);
    reply->set_tuning_spmv_equivalents_total(stats.counters.tuning_spmv_equivalents_total);
    reply->set_calibrated(stats.calibrated);
    reply->set_calibrating(stats.calibrating);
    const auto add_tier = [&](const char* tier, std::uint64_t hits, std::uint64_t misses) {
      auto* out = reply->add_plan_store_tiers();
      out->set_tier(tier);
      out->set_hits(hits);
      out->set_misses(misses);
    };
    add_tier("local", store_stats_.local_hits, store_stats_.local_misses);
    if (store_stats_.cluster_configured)
      add_tier("cluster", store_stats_.cluster_hits, store_stats_.cluster_misses);
    reply->set_cluster_store_available(store_stats_.cluster_available);
  });
}

}  // namespace spmvd
