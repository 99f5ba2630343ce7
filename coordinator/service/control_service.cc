#include "coordinator/service/control_service.h"
#include "engine/common/steady_wait.h"

#include <algorithm>
#include <limits>
#include <map>
#include <memory>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "coordinator/scheduler/cron.h"
#include "coordinator/service/retention.h"
#include "coordinator/service/revocation.h"
#include "coordinator/service/run_cases.h"
#include "coordinator/service/secrets.h"
#include "coordinator/service/selector.h"
#include "engine/common/log.h"
#include "engine/common/message_limits.h"
#include "engine/common/message_text.h"
#include "engine/common/text.h"
#include "engine/common/status_macros.h"
#include "engine/plan/plan.h"
#include "google/protobuf/io/coded_stream.h"

namespace fleetmark::service {

grpc::Status ToGrpcStatus(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  // What the caller sent and the message echoes is cut (a 6 MB plan field was sent back whole).
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()), CutLongEchoes(std::string(status.message())));
}

namespace {

// Fills JobInfo.current_case_id of `run`'s running jobs whose agents are connected here
// (their last JobProgress; not stored, so other coordinators' agents have none). Looks
// at every session of the registry: O(connected agents) per call.
void AddCurrentCases(const AgentRegistry& registry, v1::RunInfo& run) {
  std::map<std::string, v1::JobInfo*> running;
  for (v1::JobInfo& job : *run.mutable_jobs()) {
    if (job.status() == "running") running[job.job_id()] = &job;
  }
  if (running.empty()) return;
  for (const std::shared_ptr<AgentSession>& session : registry.All()) {
    const AgentSession::AgentState state = session->state();
    if (auto it = running.find(state.running_job); it != running.end() && !state.current_case.empty()) {
      it->second->set_current_case_id(state.current_case);
    }
  }
}

// Bytes a length-delimited field of `length` bytes takes in its message (field numbers
// below 16: a one-byte tag).
size_t FieldBytes(size_t length) { return 1 + google::protobuf::io::CodedOutputStream::VarintSize64(length) + length; }

}  // namespace

size_t JobAssignmentBytes(const v1::Plan& plan, bool quick, const std::string& filter) {
  // The assignment without its plan (ids are UUIDs, 36 characters), then the plan's
  // field added by size: a plan of up to 64 MiB is not copied to be measured.
  v1::JobAssignment assignment;
  assignment.set_job_id(std::string(36, 'f'));
  assignment.set_run_id(std::string(36, 'f'));
  assignment.set_quick(quick);
  assignment.set_filter(filter);
  assignment.set_attempt(std::numeric_limits<uint32_t>::max());
  const size_t assignment_bytes = assignment.ByteSizeLong() + FieldBytes(plan.ByteSizeLong());
  return FieldBytes(assignment_bytes);  // CoordinatorMessage.assignment
}

size_t MaxJobAssignmentBytes() {
  return static_cast<size_t>(std::min(kCoordinatorMaxMessageBytes, kAgentMaxMessageBytes));
}

absl::Status CheckPlanDeliverable(const v1::Plan& plan, bool quick, const std::string& filter, const std::string& field,
                                  size_t limit_bytes) {
  const size_t bytes = JobAssignmentBytes(plan, quick, filter);
  if (bytes <= limit_bytes) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      field, ": a job of this plan is ", bytes, " bytes serialized, over the agent stream's message limit of ",
      FormatMessageLimit(limit_bytes), " (", limit_bytes, " bytes): no agent could receive it; split the plan"));
}

std::vector<ResultPage> PageResults(const store::ResultExportIndex& index, size_t page_bytes) {
  std::vector<ResultPage> pages(1);
  size_t bytes = 0;
  for (size_t i = 0; i < index.results.size(); ++i) {
    const size_t result_bytes = FieldBytes(index.results[i].bytes);
    if (pages.back().end > pages.back().begin && bytes + result_bytes > page_bytes) {
      pages.push_back({i, i});
      bytes = 0;
    }
    pages.back().end = i + 1;
    bytes += result_bytes;
  }
  return pages;
}

absl::StatusOr<store::NewRun> BuildRun(store::Store& store, const v1::Plan& plan, const std::string& selector,
                                       bool quick, const std::string& filter, const std::string& submitted_by,
                                       uint32_t max_attempts, const v1::Preconditions& default_preconditions,
                                       absl::Duration queue_offline) {
  if (!plan.has_preconditions() && default_preconditions.ByteSizeLong() > 0) {
    v1::Plan gated = plan;
    *gated.mutable_preconditions() = default_preconditions;
    return BuildRun(store, gated, selector, quick, filter, submitted_by, max_attempts, {}, queue_offline);
  }
  const bool include_offline = queue_offline != absl::ZeroDuration();
  if (include_offline) FLEETMARK_RETURN_IF_ERROR(CheckQueueOffline(queue_offline, "queue_offline_ms"));
  absl::Status valid = engine::ValidatePlan(plan);
  if (!valid.ok()) return absl::InvalidArgumentError(absl::StrCat("plan refused: ", valid.message()));
  FLEETMARK_RETURN_IF_ERROR(CheckPlanDeliverable(plan, quick, filter, "plan refused: plan"));
  FLEETMARK_ASSIGN_OR_RETURN(std::vector<std::string> case_ids, SelectedCaseIds(plan, quick, filter));
  FLEETMARK_ASSIGN_OR_RETURN(Selector parsed, Selector::Parse(selector));
  store::NewRun run;
  size_t online = 0;
  std::vector<std::string> quarantined;  // selectable and matching, but skipped for their health
  std::vector<store::AgentSummary> agents;
  auto select = [&](std::vector<store::AgentSummary> listed) {
    agents = std::move(listed);
    online = 0;
    run.agent_ids.clear();
    quarantined.clear();
    for (const store::AgentSummary& agent : agents) {
      if (agent.online) ++online;
      if (!agent.online && !include_offline) continue;
      if (!parsed.Matches(agent.name, agent.profile->host, agent.profile->labels)) continue;
      if (parsed.AdmitsHealth(agent.quarantined)) {
        run.agent_ids.push_back(agent.agent_id);
      } else if (agent.quarantined) {
        quarantined.push_back(absl::StrCat(agent.name, " (", agent.quarantine_reason, ")"));
      }
    }
  };
  // A selector naming one agent reads that agent only (a submit listed all 10 000 agents
  // of a fleet for it: 37-46 ms); when it selects nothing, the whole listing gives the
  // refusal its counts.
  if (const std::optional<std::string> name = parsed.ExactName()) {
    FLEETMARK_ASSIGN_OR_RETURN(std::vector<store::AgentSummary> named, store.ListAgentSummariesNamed(*name));
    select(std::move(named));
  }
  if (run.agent_ids.empty()) {
    FLEETMARK_ASSIGN_OR_RETURN(std::vector<store::AgentSummary> all, store.ListAgentSummaries());
    select(std::move(all));
  }
  if (run.agent_ids.empty() && !quarantined.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "every ", include_offline ? "" : "online ", "agent matching selector \"", selector,
        "\" is quarantined: ", absl::StrJoin(quarantined, "; "),
        ". Release one with `fleetmark agents release NAME`, or add health=any to the selector to run on it anyway"));
  }
  if (run.agent_ids.empty() && include_offline) {
    return absl::FailedPreconditionError(absl::StrCat("no agent, online or offline, matches selector \"", selector,
                                                      "\" (", agents.size(), " agents known)"));
  }
  if (run.agent_ids.empty()) {
    return absl::FailedPreconditionError(absl::StrCat("no online agent matches selector \"", selector, "\" (",
                                                      agents.size(), " agents known, ", online, " online)"));
  }
  run.plan = plan;
  run.selector = selector;
  run.quick = quick;
  run.filter = filter;
  run.submitted_by = submitted_by;
  run.max_attempts = max_attempts;
  run.cases_total = static_cast<uint32_t>(case_ids.size());  // after --quick and --filter
  run.case_ids = std::move(case_ids);
  run.queue_expiry = include_offline ? queue_offline : absl::ZeroDuration();
  return run;
}

ControlServiceImpl::ControlServiceImpl(store::Store& store, Executor& executor, Dispatcher& dispatcher,
                                       AgentRegistry& registry, ControlServiceOptions options)
    : store_(store),
      reads_(store, options.read_replica, options.read_router),
      executor_(executor),
      dispatcher_(dispatcher),
      registry_(registry),
      options_(options),
      clock_(options.clock != nullptr ? *options.clock : SystemClock()) {}

grpc::Status ControlServiceImpl::Authorize(const grpc::ServerContextBase& context) const {
  if (options_.admin_token.empty()) {
    return grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                        "control calls are disabled: the coordinator was started without --admin_token_file");
  }
  const auto& metadata = context.client_metadata();
  auto it = metadata.find("authorization");
  if (it == metadata.end()) {
    return grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                        "missing \"authorization: Bearer <admin token>\" metadata (see --admin_token_file)");
  }
  const std::string value(it->second.data(), it->second.size());
  if (!absl::StartsWith(value, "Bearer ") || !ConstantTimeEquals(value.substr(7), options_.admin_token)) {
    return grpc::Status(grpc::StatusCode::UNAUTHENTICATED, "admin token refused");
  }
  return grpc::Status::OK;
}

grpc::ServerUnaryReactor* ControlServiceImpl::Async(grpc::CallbackServerContext* context,
                                                    std::function<absl::Status()> work) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  if (grpc::Status auth = Authorize(*context); !auth.ok()) {
    reactor->Finish(auth);
    return reactor;
  }
  executor_.Post([reactor, work = std::move(work)] { reactor->Finish(ToGrpcStatus(work())); });
  return reactor;
}

grpc::ServerUnaryReactor* ControlServiceImpl::SubmitRun(grpc::CallbackServerContext* context,
                                                        const v1::SubmitRunRequest* request,
                                                        v1::SubmitRunResponse* response) {
  return Async(context, [this, request, response]() -> absl::Status {
    FLEETMARK_ASSIGN_OR_RETURN(
        store::NewRun run,
        BuildRun(store_, request->plan(), request->selector(), request->quick(), request->filter(),
                 request->submitted_by().empty() ? "cli" : request->submitted_by(), options_.max_attempts,
                 options_.default_preconditions, absl::Milliseconds(request->queue_offline_ms())));
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
                               reads_.ForList([&](store::Store& store) { return store.ListRuns(limit); }));
    for (v1::RunInfo& run : runs) *response->add_runs() = std::move(run);
    return absl::OkStatus();
  });
}

namespace {

// A server stream ended at once with `status` (a refused token).
template <typename Message>
class RefusedWriter : public grpc::ServerWriteReactor<Message> {
 public:
  explicit RefusedWriter(grpc::Status status) { this->Finish(status); }
  void OnDone() override { delete this; }
};

// Streams a run's state whenever it changes, until it ends. The requested id (or
// prefix) is resolved on the first poll. Exactly one of "a write in flight" or "a poll
// scheduled" exists at any time, so Finish never races a write.
class RunWatcher : public grpc::ServerWriteReactor<v1::RunInfo> {
 public:
  RunWatcher(store::Store& store, Executor& executor, const AgentRegistry& registry, std::string run_id,
             absl::Duration poll)
      : state_(std::make_shared<State>(store, executor, registry, std::move(run_id), poll)) {
    state_->reactor = this;
    Schedule(state_, absl::ZeroDuration());
  }
  void OnWriteDone(bool ok) override {
    if (!ok) {
      Finish(grpc::Status(grpc::StatusCode::UNAVAILABLE, "write failed"));
      return;
    }
    if (RunFinished(state_->last.status())) {
      Finish(grpc::Status::OK);
      return;
    }
    Schedule(state_, state_->poll);
  }
  void OnCancel() override { state_->cancelled = true; }
  void OnDone() override { delete this; }

 private:
  struct State {
    State(store::Store& s, Executor& e, const AgentRegistry& r, std::string id, absl::Duration p)
        : store(s), executor(e), registry(r), run_id(std::move(id)), poll(p) {}
    store::Store& store;
    Executor& executor;
    const AgentRegistry& registry;
    std::string run_id;  // as requested until resolved
    bool resolved = false;
    const absl::Duration poll;
    RunWatcher* reactor = nullptr;
    std::atomic<bool> cancelled{false};
    v1::RunInfo last;
    std::string last_bytes;
    int failures = 0;
  };
  static void Schedule(std::shared_ptr<State> state, absl::Duration delay) {
    state->executor.PostAfter(delay, [state] { Poll(state); });
  }
  // The run, its id (or prefix) resolved on the first call.
  static absl::StatusOr<v1::RunInfo> Load(State& state) {
    if (!state.resolved) {
      FLEETMARK_ASSIGN_OR_RETURN(std::string run_id, state.store.ResolveRunId(state.run_id));
      state.run_id = std::move(run_id);
      state.resolved = true;
    }
    FLEETMARK_ASSIGN_OR_RETURN(v1::RunInfo run, state.store.GetRun(state.run_id));
    AddCurrentCases(state.registry, run);
    return run;
  }
  static void Poll(const std::shared_ptr<State>& state) {
    RunWatcher* reactor = state->reactor;
    if (state->cancelled) {
      reactor->Finish(grpc::Status(grpc::StatusCode::CANCELLED, "watch cancelled"));
      return;
    }
    absl::StatusOr<v1::RunInfo> run = Load(*state);
    if (!run.ok()) {
      if (absl::IsUnavailable(run.status()) && ++state->failures < 100) {
        Schedule(state, state->poll * 3);
        return;
      }
      reactor->Finish(ToGrpcStatus(run.status()));
      return;
    }
    state->failures = 0;
    std::string bytes = run->SerializeAsString();
    if (bytes == state->last_bytes) {
      Schedule(state, state->poll);
      return;
    }
    state->last_bytes = std::move(bytes);
    state->last = *std::move(run);
    reactor->StartWrite(&state->last);
  }
  std::shared_ptr<State> state_;
};

}  // namespace

grpc::ServerWriteReactor<v1::RunInfo>* ControlServiceImpl::WatchRun(grpc::CallbackServerContext* context,
                                                                    const v1::WatchRunRequest* request) {
  if (grpc::Status auth = Authorize(*context); !auth.ok()) return new RefusedWriter<v1::RunInfo>(auth);
  return new RunWatcher(store_, executor_, registry_, request->run_id(), options_.watch_poll);
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

grpc::ServerUnaryReactor* ControlServiceImpl::ListAgents(grpc::CallbackServerContext* context,
                                                         const v1::ListAgentsRequest* request,
                                                         v1::ListAgentsResponse* response) {
  return Async(context, [this, request, response]() -> absl::Status {
    FLEETMARK_ASSIGN_OR_RETURN(Selector selector, Selector::Parse(request->selector()));
    FLEETMARK_ASSIGN_OR_RETURN(std::vector<v1::AgentInfo> agents, store_.ListAgents(request->include_removed()));
    for (v1::AgentInfo& agent : agents) {
      // A job that ended (cancelled) is still the agent's until it reports it stopped:
      // an agent connected here is not shown idle while it may still run one.
      if (agent.running_job_id().empty()) {
        if (std::shared_ptr<AgentSession> session = registry_.Find(agent.agent_id()); session != nullptr) {
          agent.set_running_job_id(session->state().running_job);
        }
      }
      std::map<std::string, std::string> labels(agent.labels().begin(), agent.labels().end());
      // Listing shows every agent's health; it filters by health only when asked.
      if (selector.has_health_term() && !selector.AdmitsHealth(agent.health() == store::kHealthQuarantined)) continue;
      if (selector.Matches(agent.name(), agent.host(), labels)) *response->add_agents() = std::move(agent);
    }
    return absl::OkStatus();
  });
}

grpc::ServerUnaryReactor* ControlServiceImpl::CreateSchedule(grpc::CallbackServerContext* context,
                                                             const v1::CreateScheduleRequest* request,
                                                             v1::Schedule* response) {
  return Async(context, [this, request, response]() -> absl::Status {
    const v1::Schedule& schedule = request->schedule();
    FLEETMARK_ASSIGN_OR_RETURN(scheduler::CronSchedule cron, scheduler::CronSchedule::Parse(schedule.cron()));
    absl::Status plan = engine::ValidatePlan(schedule.plan());
    if (!plan.ok()) return absl::InvalidArgumentError(absl::StrCat("schedule.plan refused: ", plan.message()));
    FLEETMARK_RETURN_IF_ERROR(CheckPlanDeliverable(schedule.plan(), schedule.quick(), schedule.filter(),
                                                   "schedule.plan refused: schedule.plan"));
    // The filter must compile and select a case now, not fail at every fire
    // (InvalidArgument naming --filter).
    FLEETMARK_RETURN_IF_ERROR(SelectedCaseIds(schedule.plan(), schedule.quick(), schedule.filter()).status());
    FLEETMARK_RETURN_IF_ERROR(Selector::Parse(schedule.selector()).status());
    std::optional<absl::Time> next = cron.NextAfter(clock_.Now());
    if (!next) {
      return absl::InvalidArgumentError(
          absl::StrCat("schedule.cron \"", schedule.cron(), "\": never fires in the next 5 years"));
    }
    FLEETMARK_ASSIGN_OR_RETURN(*response, store_.CreateSchedule(schedule, *next));
    return absl::OkStatus();
  });
}

grpc::ServerUnaryReactor* ControlServiceImpl::ListSchedules(grpc::CallbackServerContext* context,
                                                            const v1::ListSchedulesRequest*,
                                                            v1::ListSchedulesResponse* response) {
  return Async(context, [this, response]() -> absl::Status {
    FLEETMARK_ASSIGN_OR_RETURN(std::vector<v1::Schedule> schedules, store_.ListSchedules());
    for (v1::Schedule& s : schedules) *response->add_schedules() = std::move(s);
    return absl::OkStatus();
  });
}

grpc::ServerUnaryReactor* ControlServiceImpl::DeleteSchedule(grpc::CallbackServerContext* context,
                                                             const v1::DeleteScheduleRequest* request, v1::Empty*) {
  return Async(context, [this, request] { return store_.DeleteSchedule(request->name()); });
}

grpc::ServerUnaryReactor* ControlServiceImpl::SetSchedulePaused(grpc::CallbackServerContext* context,
                                                                const v1::SetSchedulePausedRequest* request,
                                                                v1::Schedule* response) {
  return Async(context, [this, request, response]() -> absl::Status {
    FLEETMARK_RETURN_IF_ERROR(store_.SetSchedulePaused(request->name(), request->paused()));
    FLEETMARK_ASSIGN_OR_RETURN(std::vector<v1::Schedule> schedules, store_.ListSchedules());
    for (v1::Schedule& s : schedules) {
      if (s.name() == request->name()) *response = std::move(s);
    }
    return absl::OkStatus();
  });
}

grpc::ServerUnaryReactor* ControlServiceImpl::RunSchedule(grpc::CallbackServerContext* context,
                                                          const v1::RunScheduleRequest* request,
                                                          v1::RunInfo* response) {
  return Async(context, [this, request, response]() -> absl::Status {
    if (!options_.run_schedule)
      return absl::FailedPreconditionError("this coordinator has no scheduler to run schedules");
    FLEETMARK_ASSIGN_OR_RETURN(*response, options_.run_schedule(request->name()));
    dispatcher_.WakeAllIdle();  // as after a sweep's fires
    return absl::OkStatus();
  });
}

grpc::ServerUnaryReactor* ControlServiceImpl::CreateToken(grpc::CallbackServerContext* context,
                                                          const v1::CreateTokenRequest* request,
                                                          v1::CreateTokenResponse* response) {
  return Async(context, [this, request, response]() -> absl::Status {
    // The description is listed by `tokens list` and the web view: one line of at most
    // 256 bytes of printable UTF-8 (message_text.h's default rule).
    FLEETMARK_RETURN_IF_ERROR(CheckMessageText(*request, "token", MessageTextRules{}));
    const std::string token_id = absl::StrCat("tok-", RandomToken().substr(0, 12));
    const std::string token = RandomToken();
    FLEETMARK_RETURN_IF_ERROR(store_.CreateEnrollmentToken(token_id, Sha256Hex(token), request->description()));
    response->set_token_id(token_id);
    response->set_token(token);
    return absl::OkStatus();
  });
}

grpc::ServerUnaryReactor* ControlServiceImpl::RevokeToken(grpc::CallbackServerContext* context,
                                                          const v1::RevokeTokenRequest* request, v1::Empty*) {
  return Async(context, [this, request]() -> absl::Status {
    FLEETMARK_RETURN_IF_ERROR(store_.RevokeEnrollmentToken(request->token_id()));
    // This coordinator's agents enrolled with it are disconnected now; other
    // coordinators' at their next liveness flush. A database error here leaves it to
    // the sweeper: the revocation itself is committed.
    absl::StatusOr<std::vector<std::string>> ended = EndRevokedAgentStreams(store_, registry_);
    if (ended.ok() && !ended->empty()) {
      ::fleetmark::Log(::fleetmark::LogLevel::kInfo,
                       absl::StrCat("enrollment token ", request->token_id(), " revoked: disconnected ",
                                    absl::StrJoin(*ended, ", ")));
    }
    return absl::OkStatus();
  });
}

namespace {

// Loads the results [page.begin, page.end) of `index` into `out` (after what it holds).
absl::Status LoadPage(store::Store& store, const store::ResultExportIndex& index, ResultPage page,
                      v1::ExportResultsResponse* out) {
  std::vector<std::string> ids;
  ids.reserve(page.end - page.begin);
  for (size_t i = page.begin; i < page.end; ++i) ids.push_back(index.results[i].result_id);
  FLEETMARK_ASSIGN_OR_RETURN(std::vector<v1::CaseResult> results, store.LoadResults(ids));
  out->mutable_results()->Reserve(out->results_size() + static_cast<int>(results.size()));
  for (v1::CaseResult& result : results) *out->add_results() = std::move(result);
  return absl::OkStatus();
}

// The run and its hosts: what the first (or only) message of an export carries.
void SetHeader(const store::ResultExportIndex& index, v1::ExportResultsResponse* out) {
  *out->mutable_run() = index.run;
  for (const auto& [name, host] : index.hosts) (*out->mutable_hosts())[name] = host;
}

// StreamResults: the run's index first (resolving the id), then one page per write,
// each loaded on the executor after the previous write completed. As RunWatcher,
// exactly one of "a write in flight" or "a load posted" exists at any time, so Finish
// never races a write.
class ResultStreamer : public grpc::ServerWriteReactor<v1::ExportResultsResponse> {
 public:
  // The store is chosen on the executor (ReadStores::ForRun may query the replica).
  // record_export: once the last page is loaded, Store::RecordRunExported (on the primary).
  ResultStreamer(ReadStores& reads, Executor& executor, std::string run_id, std::string agent_name, bool record_export)
      : state_(std::make_shared<State>(reads, executor, std::move(run_id), std::move(agent_name))) {
    state_->record_export = record_export;
    state_->reactor = this;
    state_->executor.Post([state = state_] { Start(state); });
  }
  void OnWriteDone(bool ok) override {
    if (!ok) {
      Finish(grpc::Status(grpc::StatusCode::UNAVAILABLE, "write failed"));
      return;
    }
    if (state_->next_page >= state_->pages.size()) {
      Finish(grpc::Status::OK);
      return;
    }
    state_->executor.Post([state = state_] { WriteNextPage(state); });
  }
  void OnCancel() override { state_->cancelled = true; }
  void OnDone() override { delete this; }

 private:
  struct State {
    State(ReadStores& r, Executor& e, std::string id, std::string agent)
        : reads(r), executor(e), run_id(std::move(id)), agent_name(std::move(agent)) {}
    ReadStores& reads;
    store::Store* store = nullptr;  // set by Start
    Executor& executor;
    const std::string run_id;  // as requested
    const std::string agent_name;
    bool record_export = false;
    ResultStreamer* reactor = nullptr;
    std::atomic<bool> cancelled{false};
    store::ResultExportIndex index;
    std::vector<ResultPage> pages;
    size_t next_page = 0;
    v1::ExportResultsResponse out;  // the message being written
  };
  static void Start(const std::shared_ptr<State>& state) {
    state->store = &state->reads.ForRun(state->run_id);
    absl::Status indexed = [&]() -> absl::Status {
      FLEETMARK_ASSIGN_OR_RETURN(const std::string run_id, state->store->ResolveRunId(state->run_id));
      FLEETMARK_ASSIGN_OR_RETURN(state->index, state->store->ListExportResults(run_id, state->agent_name));
      return absl::OkStatus();
    }();
    if (!indexed.ok()) {
      state->reactor->Finish(ToGrpcStatus(indexed));
      return;
    }
    state->pages = PageResults(state->index, kResultPageBytes);
    WriteNextPage(state);
  }
  static void WriteNextPage(const std::shared_ptr<State>& state) {
    if (state->cancelled) {
      state->reactor->Finish(grpc::Status(grpc::StatusCode::CANCELLED, "export cancelled"));
      return;
    }
    state->out.Clear();
    if (state->next_page == 0) SetHeader(state->index, &state->out);
    if (absl::Status loaded = LoadPage(*state->store, state->index, state->pages[state->next_page], &state->out);
        !loaded.ok()) {
      state->reactor->Finish(ToGrpcStatus(loaded));
      return;
    }
    ++state->next_page;
    if (state->next_page == state->pages.size() && state->record_export) {
      if (absl::Status recorded = state->reads.primary().RecordRunExported(state->index.run.run_id()); !recorded.ok()) {
        state->reactor->Finish(ToGrpcStatus(recorded));
        return;
      }
    }
    state->reactor->StartWrite(&state->out);
  }
  std::shared_ptr<State> state_;
};

}  // namespace

grpc::ServerUnaryReactor* ControlServiceImpl::ExportResults(grpc::CallbackServerContext* context,
                                                            const v1::ExportResultsRequest* request,
                                                            v1::ExportResultsResponse* response) {
  return Async(context, [this, request, response]() -> absl::Status {
    store::Store& store = reads_.ForRun(request->run_id());
    FLEETMARK_ASSIGN_OR_RETURN(const std::string run_id, store.ResolveRunId(request->run_id()));
    FLEETMARK_ASSIGN_OR_RETURN(store::ResultExportIndex index, store.ListExportResults(run_id, request->agent_name()));
    // The answer's size from the index, before loading anything.
    SetHeader(index, response);
    size_t bytes = response->ByteSizeLong();
    for (const store::ResultExportIndex::Entry& entry : index.results) bytes += FieldBytes(entry.bytes);
    if (bytes > static_cast<size_t>(kCoordinatorMaxMessageBytes)) {
      response->Clear();
      return absl::ResourceExhaustedError(
          absl::StrCat("run ", run_id, ": its results take ", bytes, " bytes, over the ",
                       FormatMessageLimit(kCoordinatorMaxMessageBytes), " limit of one ExportResults answer (",
                       kCoordinatorMaxMessageBytes, " bytes); read them with StreamResults, as fleetmark export does"));
    }
    FLEETMARK_RETURN_IF_ERROR(LoadPage(store, index, {0, index.results.size()}, response));
    if (request->record_export() && request->agent_name().empty()) {
      FLEETMARK_RETURN_IF_ERROR(store_.RecordRunExported(run_id));
    }
    return absl::OkStatus();
  });
}

grpc::ServerWriteReactor<v1::ExportResultsResponse>* ControlServiceImpl::StreamResults(
    grpc::CallbackServerContext* context, const v1::ExportResultsRequest* request) {
  if (grpc::Status auth = Authorize(*context); !auth.ok()) {
    return new RefusedWriter<v1::ExportResultsResponse>(auth);
  }
  return new ResultStreamer(reads_, executor_, request->run_id(), request->agent_name(),
                            request->record_export() && request->agent_name().empty());
}

grpc::ServerUnaryReactor* ControlServiceImpl::ListTokens(grpc::CallbackServerContext* context,
                                                         const v1::ListTokensRequest*,
                                                         v1::ListTokensResponse* response) {
  return Async(context, [this, response]() -> absl::Status {
    FLEETMARK_ASSIGN_OR_RETURN(std::vector<v1::TokenInfo> tokens, store_.ListEnrollmentTokens());
    for (v1::TokenInfo& token : tokens) *response->add_tokens() = std::move(token);
    return absl::OkStatus();
  });
}

grpc::ServerUnaryReactor* ControlServiceImpl::RemoveAgent(grpc::CallbackServerContext* context,
                                                          const v1::RemoveAgentRequest* request,
                                                          v1::RemoveAgentResponse* response) {
  return Async(context, [this, request, response]() -> absl::Status {
    FLEETMARK_ASSIGN_OR_RETURN(store::RemovedAgent removed, store_.RemoveAgent(request->name()));
    response->set_agent_id(removed.agent_id);
    for (const std::string& job : removed.failed_jobs) response->add_failed_jobs(job);
    // Its stream here ends now; on another coordinator at its next liveness flush. A
    // database error here leaves it to the sweeper: the removal itself is committed.
    absl::StatusOr<std::vector<std::string>> ended = EndRevokedAgentStreams(store_, registry_);
    if (ended.ok() && !ended->empty()) {
      ::fleetmark::Log(::fleetmark::LogLevel::kInfo, absl::StrCat("agent ", request->name(), " removed: disconnected"));
    }
    return absl::OkStatus();
  });
}

grpc::ServerUnaryReactor* ControlServiceImpl::ReleaseAgent(grpc::CallbackServerContext* context,
                                                           const v1::ReleaseAgentRequest* request,
                                                           v1::ReleaseAgentResponse* response) {
  return Async(context, [this, request, response]() -> absl::Status {
    FLEETMARK_ASSIGN_OR_RETURN(store::ReleasedAgent released, store_.ReleaseAgent(request->name()));
    response->set_agent_id(released.agent_id);
    response->set_reason(released.reason);
    response->set_quarantined_unix_ns(absl::ToUnixNanos(released.quarantined_at));
    ::fleetmark::Log(::fleetmark::LogLevel::kInfo,
                     absl::StrCat("agent ", request->name(), " released from quarantine (", released.reason, ")"));
    return absl::OkStatus();
  });
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

}  // namespace fleetmark::service
