#include "coordinator/service/run_watcher.h"

#include <atomic>
#include <map>
#include <memory>
#include <utility>

#include "coordinator/service/grpc_status.h"
#include "coordinator/service/read_stores.h"
#include "engine/common/status_macros.h"

namespace fleetmark::service {

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

namespace {

// Streams a run's state whenever it changes, until it ends. The requested id (or
// prefix) is resolved on the first poll. Exactly one of "a write in flight" or "a poll
// scheduled" exists at any time, so Finish never races a write.
class RunWatcher : public grpc::ServerWriteReactor<v1::RunInfo> {
 public:
  RunWatcher(store::RunStore& store, Executor& executor, const AgentRegistry& registry, std::string run_id,
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
    State(store::RunStore& s, Executor& e, const AgentRegistry& r, std::string id, absl::Duration p)
        : store(s), executor(e), registry(r), run_id(std::move(id)), poll(p) {}
    store::RunStore& store;
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

grpc::ServerWriteReactor<v1::RunInfo>* NewRunWatcher(store::RunStore& store, Executor& executor,
                                                     const AgentRegistry& registry, std::string run_id,
                                                     absl::Duration poll) {
  return new RunWatcher(store, executor, registry, std::move(run_id), poll);
}

}  // namespace fleetmark::service
