// ControlService: what the CLI (and people's scripts) ask of the coordinator — submit,
// get/list/watch/cancel runs, list agents, schedules, enrollment tokens (create, list,
// revoke), export. Every call must carry "authorization: Bearer <admin token>"
// (compared in constant time); the work runs on the coordinator's executor, never on
// gRPC threads.
//
// RevokeToken also ends the streams of this coordinator's agents enrolled with the
// token (revocation.h); other coordinators do at their next liveness flush.
//
// Every call taking a run id (GetRun, WatchRun, CancelRun, ExportResults) also accepts
// a unique prefix of it with at least 6 hex digits (Store::ResolveRunId).
//
// Errors map absl codes 1:1 onto gRPC codes: InvalidArgument for a bad plan, selector,
// cron or id (the message names the field) or an ambiguous run id prefix, NotFound,
// FailedPrecondition (no online agent matches; a token already revoked),
// Unauthenticated (missing/wrong token), Unavailable (database down).
#pragma once

#include <string>

#include <grpcpp/grpcpp.h>

#include "absl/time/time.h"
#include "coordinator/service/dispatcher.h"
#include "coordinator/service/executor.h"
#include "coordinator/store/store.h"
#include "fleetmark/v1/control.grpc.pb.h"

namespace fleetmark::service {

struct ControlServiceOptions {
  std::string admin_token;  // "" refuses every call
  uint32_t max_attempts = 3;
  absl::Duration job_lease = absl::Seconds(30);
  absl::Duration watch_poll = absl::Milliseconds(300);
};

// absl::Status → grpc::Status (same numeric codes).
grpc::Status ToGrpcStatus(const absl::Status& status);

// The run a SubmitRun request (or a schedule) creates: validates the plan and the
// selector, selects the online matching agents. InvalidArgument for a bad plan or
// selector, FailedPrecondition if no online agent matches.
absl::StatusOr<store::NewRun> BuildRun(store::Store& store, const v1::Plan& plan, const std::string& selector,
                                       bool quick, const std::string& filter, const std::string& submitted_by,
                                       uint32_t max_attempts);

class ControlServiceImpl final : public v1::ControlService::CallbackService {
 public:
  // References must outlive the service.
  ControlServiceImpl(store::Store& store, Executor& executor, Dispatcher& dispatcher,
                     AgentRegistry& registry, ControlServiceOptions options);

  grpc::ServerUnaryReactor* SubmitRun(grpc::CallbackServerContext*, const v1::SubmitRunRequest*,
                                      v1::SubmitRunResponse*) override;
  grpc::ServerUnaryReactor* GetRun(grpc::CallbackServerContext*, const v1::GetRunRequest*,
                                   v1::RunInfo*) override;
  grpc::ServerUnaryReactor* ListRuns(grpc::CallbackServerContext*, const v1::ListRunsRequest*,
                                     v1::ListRunsResponse*) override;
  grpc::ServerWriteReactor<v1::RunInfo>* WatchRun(grpc::CallbackServerContext*,
                                                  const v1::WatchRunRequest*) override;
  grpc::ServerUnaryReactor* CancelRun(grpc::CallbackServerContext*, const v1::CancelRunRequest*,
                                      v1::RunInfo*) override;
  grpc::ServerUnaryReactor* ListAgents(grpc::CallbackServerContext*, const v1::ListAgentsRequest*,
                                       v1::ListAgentsResponse*) override;
  grpc::ServerUnaryReactor* CreateSchedule(grpc::CallbackServerContext*, const v1::CreateScheduleRequest*,
                                           v1::Schedule*) override;
  grpc::ServerUnaryReactor* ListSchedules(grpc::CallbackServerContext*, const v1::ListSchedulesRequest*,
                                          v1::ListSchedulesResponse*) override;
  grpc::ServerUnaryReactor* DeleteSchedule(grpc::CallbackServerContext*, const v1::DeleteScheduleRequest*,
                                           v1::Empty*) override;
  grpc::ServerUnaryReactor* CreateToken(grpc::CallbackServerContext*, const v1::CreateTokenRequest*,
                                        v1::CreateTokenResponse*) override;
  grpc::ServerUnaryReactor* RevokeToken(grpc::CallbackServerContext*, const v1::RevokeTokenRequest*,
                                        v1::Empty*) override;
  grpc::ServerUnaryReactor* ExportResults(grpc::CallbackServerContext*, const v1::ExportResultsRequest*,
                                          v1::ExportResultsResponse*) override;
  grpc::ServerUnaryReactor* ListTokens(grpc::CallbackServerContext*, const v1::ListTokensRequest*,
                                       v1::ListTokensResponse*) override;
  grpc::ServerUnaryReactor* RemoveAgent(grpc::CallbackServerContext*, const v1::RemoveAgentRequest*,
                                        v1::RemoveAgentResponse*) override;

 private:
  grpc::Status Authorize(grpc::CallbackServerContext* context) const;
  // Authorizes, then runs `work` on the executor and finishes with its status.
  grpc::ServerUnaryReactor* Async(grpc::CallbackServerContext* context, std::function<absl::Status()> work);

  store::Store& store_;
  Executor& executor_;
  Dispatcher& dispatcher_;
  AgentRegistry& registry_;
  const ControlServiceOptions options_;
};

}  // namespace fleetmark::service
