#include "coordinator/service/control_service.h"

#include <algorithm>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "coordinator/service/grpc_status.h"
#include "coordinator/service/run_watcher.h"
#include "engine/common/status_macros.h"
#include "engine/common/steady_wait.h"

namespace fleetmark::service {

grpc::ServerUnaryReactor* ControlServiceImpl::SubmitRun(grpc::CallbackServerContext* context,
                                                        const v1::SubmitRunRequest* request,
                                                        v1::SubmitRunResponse* response) {
  return Async(context, [this, request, response]() -> absl::Status {
    FLEETMARK_ASSIGN_OR_RETURN(store::NewRun run, runs_.Submitted(*request));
    // Create the run and assign the jobs of idle local agents in one transaction, then
    // push them at once; anything left (busy agents, a race with another coordinator)
    // goes through the dispatcher.
    const absl::Time claim_start = SteadyNow();  // Deliver's metric: steady time
    absl::StatusOr<store::Store::CreatedRun> created =
        store_.CreateRunAndClaim(run, dispatcher_.IdleLocal(run.agent_ids), options_.job_lease);
    std::vector<std::string> unassigned = run.agent_ids;
    if (created.ok()) {
      *response->mutable_run() = std::move(created->run);
      std::set<std::string> assigned;
      for (const store::ClaimedJob& job : created->claimed) assigned.insert(job.agent_id);
      unassigned.clear();
      for (const std::string& id : run.agent_ids) {
        if (assigned.count(id) == 0) unassigned.push_back(id);
      }
      dispatcher_.Deliver(std::move(created->claimed), claim_start);
    } else if (absl::IsAlreadyExists(created.status())) {
      FLEETMARK_ASSIGN_OR_RETURN(*response->mutable_run(), store_.CreateRun(run));
    } else {
      return created.status();
    }
    dispatcher_.Wake(unassigned);
    return absl::OkStatus();
  });
}

grpc::ServerUnaryReactor* ControlServiceImpl::GetRun(grpc::CallbackServerContext* context,
                                                     const v1::GetRunRequest* request, v1::RunInfo* response) {
  return Async(context, [this, request, response]() -> absl::Status {
    FLEETMARK_ASSIGN_OR_RETURN(const std::string run_id, store_.ResolveRunId(request->run_id()));
    FLEETMARK_ASSIGN_OR_RETURN(*response, store_.GetRun(run_id));
    AddCurrentCases(registry_, *response);
    return absl::OkStatus();
  });
}

grpc::ServerUnaryReactor* ControlServiceImpl::ListRuns(grpc::CallbackServerContext* context,
                                                       const v1::ListRunsRequest* request,
                                                       v1::ListRunsResponse* response) {
  return Async(context, [this, request, response]() -> absl::Status {
    const int limit = request->limit() == 0 ? 20 : static_cast<int>(std::min<uint32_t>(request->limit(), 100000));
    FLEETMARK_ASSIGN_OR_RETURN(std::vector<v1::RunInfo> runs,
                               reads_.ForList([&](store::RunStore& store) { return store.ListRuns(limit); }));
    for (v1::RunInfo& run : runs) *response->add_runs() = std::move(run);
    return absl::OkStatus();
  });
}

grpc::ServerWriteReactor<v1::RunInfo>* ControlServiceImpl::WatchRun(grpc::CallbackServerContext* context,
                                                                    const v1::WatchRunRequest* request) {
  if (grpc::Status auth = Authorize(*context); !auth.ok()) return new RefusedWriter<v1::RunInfo>(auth);
  return NewRunWatcher(store_, executor_, registry_, request->run_id(), options_.watch_poll);
}

grpc::ServerUnaryReactor* ControlServiceImpl::CancelRun(grpc::CallbackServerContext* context,
                                                        const v1::CancelRunRequest* request, v1::RunInfo* response) {
  return Async(context, [this, request, response]() -> absl::Status {
    FLEETMARK_ASSIGN_OR_RETURN(const std::string run_id, store_.ResolveRunId(request->run_id()));
    FLEETMARK_ASSIGN_OR_RETURN(store::CancelledRun cancelled, store_.CancelRun(run_id));
    for (const auto& [agent_id, job_id] : cancelled.agent_jobs) {
      std::shared_ptr<AgentSession> session = registry_.Find(agent_id);
      if (session == nullptr) continue;
      // The agent stays busy until it reports the job finished (cancelled).
      session->UpdateState([&, job = job_id](AgentSession::AgentState& s) {
        if (s.running_job == job) s.cancel_sent = job;
      });
      v1::CoordinatorMessage message;
      message.mutable_cancellation()->set_job_id(job_id);
      message.mutable_cancellation()->set_reason("run cancelled");
      session->Send(std::move(message));
    }
    *response = std::move(cancelled.run);
    return absl::OkStatus();
  });
}

}  // namespace fleetmark::service
