// ControlService: what the CLI (and people's scripts) ask of the coordinator — submit,
// get/list/watch/cancel runs, list agents, schedules, enrollment tokens (create, list,
// revoke), export. Every call must carry "authorization: Bearer <admin token>"
// (compared in constant time); the work runs on the coordinator's executor, never on
// gRPC threads.
//
// RevokeToken also ends the streams of this coordinator's agents enrolled with the
// token (revocation.h); other coordinators do on the notification its transaction sends
// (notification_handler.h), else at their next liveness flush.
//
// Every call taking a run id (GetRun, WatchRun, CancelRun, ExportResults,
// StreamResults) also accepts a unique prefix of it with at least 6 hex digits
// (Store::ResolveRunId).
//
// The handlers are adapters, defined by area: runs (control_runs.cc: submit through
// the run builder, get, list, watch through run_watcher.h, cancel), schedules
// (control_schedules.cc, checked by the run builder), the fleet (control_fleet.cc:
// agents and enrollment tokens), results (control_results.cc: export and stream through
// result_export.h, changes, prune). Every rule a submitted run or a schedule must pass
// is checked by the run builder (run_builder.h), shared with the scheduler.
//
// Errors map absl codes 1:1 onto gRPC codes: InvalidArgument for a bad plan, selector,
// cron or id (the message names the field) or an ambiguous run id prefix, or a plan
// too large to deliver to an agent (naming its size and the limit), NotFound,
// FailedPrecondition (no online agent matches; a token already revoked),
// Unauthenticated (missing/wrong token), Unavailable (database down),
// ResourceExhausted (an ExportResults answer over the message limit, naming it).
#pragma once

#include <functional>
#include <string>

#include <grpcpp/grpcpp.h>

#include "absl/time/time.h"
#include "coordinator/service/dispatcher.h"
#include "coordinator/service/executor.h"
#include "coordinator/service/read_stores.h"
#include "coordinator/service/run_builder.h"
#include "coordinator/store/store.h"
#include "fleetmark/v1/control.grpc.pb.h"

namespace fleetmark::service {

struct ControlServiceOptions {
  std::string admin_token;  // "" refuses every call
  absl::Duration job_lease = absl::Seconds(30);
  absl::Duration watch_poll = absl::Milliseconds(300);
  // RunSchedule's work: fires the named schedule now (scheduler::ScheduleRunner::RunNow)
  // and returns its run; called on the executor. Unset (a service built without a
  // scheduler, as in unit tests): RunSchedule fails with FailedPrecondition.
  std::function<absl::StatusOr<v1::RunInfo>(const std::string& name)> run_schedule;
  // --read_database_uri: ListRuns, ExportResults and StreamResults read from this store
  // on the streaming replica while `read_router` says so (read_stores.h). Both or
  // neither; not owned, they outlive the service.
  store::Store* read_replica = nullptr;
  store::ReadRouter* read_router = nullptr;
};

class ControlServiceImpl final : public v1::ControlService::CallbackService {
 public:
  // References must outlive the service. `runs` builds SubmitRun's runs and checks
  // CreateSchedule's schedules (the coordinator's, shared with its scheduler).
  ControlServiceImpl(store::Store& store, Executor& executor, Dispatcher& dispatcher, AgentRegistry& registry,
                     const RunBuilder& runs, ControlServiceOptions options);

  grpc::ServerUnaryReactor* SubmitRun(grpc::CallbackServerContext*, const v1::SubmitRunRequest*,
                                      v1::SubmitRunResponse*) override;
  grpc::ServerUnaryReactor* GetRun(grpc::CallbackServerContext*, const v1::GetRunRequest*, v1::RunInfo*) override;
  grpc::ServerUnaryReactor* ListRuns(grpc::CallbackServerContext*, const v1::ListRunsRequest*,
                                     v1::ListRunsResponse*) override;
  grpc::ServerWriteReactor<v1::RunInfo>* WatchRun(grpc::CallbackServerContext*, const v1::WatchRunRequest*) override;
  grpc::ServerUnaryReactor* CancelRun(grpc::CallbackServerContext*, const v1::CancelRunRequest*, v1::RunInfo*) override;
  grpc::ServerUnaryReactor* ListAgents(grpc::CallbackServerContext*, const v1::ListAgentsRequest*,
                                       v1::ListAgentsResponse*) override;
  grpc::ServerUnaryReactor* CreateSchedule(grpc::CallbackServerContext*, const v1::CreateScheduleRequest*,
                                           v1::Schedule*) override;
  grpc::ServerUnaryReactor* ListSchedules(grpc::CallbackServerContext*, const v1::ListSchedulesRequest*,
                                          v1::ListSchedulesResponse*) override;
  grpc::ServerUnaryReactor* DeleteSchedule(grpc::CallbackServerContext*, const v1::DeleteScheduleRequest*,
                                           v1::Empty*) override;
  grpc::ServerUnaryReactor* SetSchedulePaused(grpc::CallbackServerContext*, const v1::SetSchedulePausedRequest*,
                                              v1::Schedule*) override;
  grpc::ServerUnaryReactor* RunSchedule(grpc::CallbackServerContext*, const v1::RunScheduleRequest*,
                                        v1::RunInfo*) override;
  grpc::ServerUnaryReactor* CreateToken(grpc::CallbackServerContext*, const v1::CreateTokenRequest*,
                                        v1::CreateTokenResponse*) override;
  grpc::ServerUnaryReactor* RevokeToken(grpc::CallbackServerContext*, const v1::RevokeTokenRequest*,
                                        v1::Empty*) override;
  grpc::ServerUnaryReactor* ExportResults(grpc::CallbackServerContext*, const v1::ExportResultsRequest*,
                                          v1::ExportResultsResponse*) override;
  grpc::ServerUnaryReactor* ListTokens(grpc::CallbackServerContext*, const v1::ListTokensRequest*,
                                       v1::ListTokensResponse*) override;
  grpc::ServerWriteReactor<v1::ExportResultsResponse>* StreamResults(grpc::CallbackServerContext*,
                                                                     const v1::ExportResultsRequest*) override;

  // OK if the call carries the admin token, else UNAUTHENTICATED saying what is wrong.
  // Thread-safe; also used for requests that fail to parse (parse_errors.h).
  grpc::Status Authorize(const grpc::ServerContextBase& context) const;
  grpc::ServerUnaryReactor* RemoveAgent(grpc::CallbackServerContext*, const v1::RemoveAgentRequest*,
                                        v1::RemoveAgentResponse*) override;
  // `agents release NAME`: Store::ReleaseAgent (NotFound, FailedPrecondition if the
  // agent is not quarantined).
  grpc::ServerUnaryReactor* ReleaseAgent(grpc::CallbackServerContext*, const v1::ReleaseAgentRequest*,
                                         v1::ReleaseAgentResponse*) override;
  // `changes list`: Store::ListChanges (InvalidArgument naming `state` or `limit`).
  grpc::ServerUnaryReactor* ListChanges(grpc::CallbackServerContext*, const v1::ListChangesRequest*,
                                        v1::ListChangesResponse*) override;
  // `results prune`: CheckRetention (retention.h), then Store::PruneResults
  // (FailedPrecondition naming unfinished or unexported runs).
  grpc::ServerUnaryReactor* PruneResults(grpc::CallbackServerContext*, const v1::PruneResultsRequest*,
                                         v1::PruneResultsResponse*) override;
  // `results import FILE`: Store::ImportResults (InvalidArgument naming the field, nothing
  // stored, for an unknown schema_version or a result an agent could not store).
  grpc::ServerUnaryReactor* ImportResults(grpc::CallbackServerContext*, const v1::ImportResultsRequest*,
                                          v1::ImportResultsResponse*) override;

 private:
  // Authorizes, then runs `work` on the executor and finishes with its status.
  grpc::ServerUnaryReactor* Async(grpc::CallbackServerContext* context, std::function<absl::Status()> work);

  store::Store& store_;
  ReadStores reads_;
  Executor& executor_;
  Dispatcher& dispatcher_;
  AgentRegistry& registry_;
  const RunBuilder& runs_;
  const ControlServiceOptions options_;
};

}  // namespace fleetmark::service
