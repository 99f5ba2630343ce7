#include "coordinator/service/control_service.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "coordinator/service/grpc_status.h"
#include "coordinator/service/result_export.h"
#include "coordinator/service/retention.h"
#include "engine/common/log.h"
#include "engine/common/status_macros.h"

namespace fleetmark::service {

grpc::ServerUnaryReactor* ControlServiceImpl::ExportResults(grpc::CallbackServerContext* context,
                                                            const v1::ExportResultsRequest* request,
                                                            v1::ExportResultsResponse* response) {
  return Async(context, [this, request, response] { return ExportWholeRun(reads_, *request, response); });
}

grpc::ServerWriteReactor<v1::ExportResultsResponse>* ControlServiceImpl::StreamResults(
    grpc::CallbackServerContext* context, const v1::ExportResultsRequest* request) {
  if (grpc::Status auth = Authorize(*context); !auth.ok()) {
    return new RefusedWriter<v1::ExportResultsResponse>(auth);
  }
  return NewResultStreamer(reads_, executor_, *request);
}

grpc::ServerUnaryReactor* ControlServiceImpl::ListChanges(grpc::CallbackServerContext* context,
                                                          const v1::ListChangesRequest* request,
                                                          v1::ListChangesResponse* response) {
  return Async(context, [this, request, response]() -> absl::Status {
    FLEETMARK_ASSIGN_OR_RETURN(
        store::ChangeFilter filter,
        store::ChangeFilterOf(request->since_unix_ns(), request->agent(), request->state(), request->limit()));
    FLEETMARK_ASSIGN_OR_RETURN(std::vector<store::ChangeRecord> found, store_.ListChanges(filter));
    for (const store::ChangeRecord& c : found) {
      v1::ChangeInfo* info = response->add_changes();
      info->set_change_id(c.change_id);
      info->set_agent_name(c.agent_name);
      info->set_agent_id(c.agent_id);
      info->set_case_id(c.case_id);
      info->set_run_id(c.run_id);
      info->set_old_level_ns(c.old_level_ns);
      info->set_new_level_ns(c.new_level_ns);
      if (c.noise_percent) info->set_noise_percent(*c.noise_percent);
      info->set_min_change_percent(c.min_change_percent);
      info->set_state(c.state);
      info->set_reason(c.reason);
      info->set_confirmation_run_id(c.confirmation_run_id);
      if (c.confirmation_median_ns) info->set_confirmation_median_ns(*c.confirmation_median_ns);
      info->set_created_unix_ns(absl::ToUnixNanos(c.created_at));
      info->set_decided_unix_ns(c.decided_at == absl::InfinitePast() ? 0 : absl::ToUnixNanos(c.decided_at));
    }
    return absl::OkStatus();
  });
}

grpc::ServerUnaryReactor* ControlServiceImpl::PruneResults(grpc::CallbackServerContext* context,
                                                           const v1::PruneResultsRequest* request,
                                                           v1::PruneResultsResponse* response) {
  return Async(context, [this, request, response]() -> absl::Status {
    store::PruneOptions options;
    options.older_than = absl::Seconds(request->older_than_seconds());
    options.force = request->force();
    options.dry_run = request->dry_run();
    FLEETMARK_RETURN_IF_ERROR(CheckRetention("older_than_seconds", options.older_than));
    FLEETMARK_ASSIGN_OR_RETURN(store::PruneOutcome pruned, store_.PruneResults(options));
    response->set_cutoff_unix_ns(absl::ToUnixNanos(pruned.cutoff));
    response->set_dry_run(options.dry_run);
    for (const store::ResultPartition& p : pruned.partitions) {
      v1::ResultPartitionInfo* info = response->add_partitions();
      info->set_name(p.name);
      info->set_from_unix_ns(absl::ToUnixNanos(p.from));
      info->set_to_unix_ns(absl::ToUnixNanos(p.to));
      info->set_estimated_rows(p.estimated_rows);
    }
    for (const std::string& run_id : pruned.run_ids) response->add_run_ids(run_id);
    if (!options.dry_run && !pruned.partitions.empty()) {
      ::fleetmark::Log(
          ::fleetmark::LogLevel::kInfo,
          absl::StrCat("results pruned: ", pruned.partitions.size(), " partitions, ", pruned.run_ids.size(),
                       " runs (older than ", absl::FormatDuration(options.older_than), ", force=", options.force, ")"));
    }
    return absl::OkStatus();
  });
}

grpc::ServerUnaryReactor* ControlServiceImpl::ImportResults(grpc::CallbackServerContext* context,
                                                            const v1::ImportResultsRequest* request,
                                                            v1::ImportResultsResponse* response) {
  return Async(context, [this, request, response]() -> absl::Status {
    const std::string submitted_by = request->submitted_by().empty() ? "import" : request->submitted_by();
    FLEETMARK_ASSIGN_OR_RETURN(store::ImportOutcome imported, store_.ImportResults(request->document(), submitted_by));
    response->set_run_id(imported.run_id);
    response->set_stored(static_cast<uint32_t>(imported.stored));
    response->set_already_stored(static_cast<uint32_t>(imported.already_stored));
    for (const store::ImportOutcome::Device& d : imported.devices) {
      v1::ImportedDevice* device = response->add_devices();
      device->set_name(d.name);
      device->set_agent_name(d.agent_name);
      device->set_matched(d.matched);
      device->set_stored(static_cast<uint32_t>(d.stored));
      device->set_already_stored(static_cast<uint32_t>(d.already_stored));
    }
    if (!imported.run_id.empty()) {
      ::fleetmark::Log(::fleetmark::LogLevel::kInfo,
                       absl::StrCat("results imported by ", submitted_by, ": run ", imported.run_id, ", ",
                                    imported.stored, " new, ", imported.already_stored, " already stored"));
    }
    return absl::OkStatus();
  });
}

}  // namespace fleetmark::service
