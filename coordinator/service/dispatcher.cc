#include "coordinator/service/dispatcher.h"
#include "engine/common/steady_wait.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "engine/common/log.h"
namespace fleetmark::service {

Dispatcher::Dispatcher(store::RunStore& store, AgentRegistry& registry, Executor& executor, absl::Duration lease,
                       CoordinatorMetrics* metrics)
    : store_(store), registry_(registry), executor_(executor), lease_(lease), metrics_(metrics) {}

void Dispatcher::Wake(const std::vector<std::string>& agent_ids) {
  if (agent_ids.empty()) return;
  bool schedule = false;
  {
    absl::MutexLock lock(&mu_);
    if (pending_.empty()) first_wake_ = SteadyNow();
    pending_.insert(agent_ids.begin(), agent_ids.end());
    if (!scheduled_) schedule = scheduled_ = true;
  }
  if (schedule) executor_.Post([this] { Run(); });
}

void Dispatcher::WakeAllIdle() {
  std::vector<std::string> idle;
  for (const auto& session : registry_.All()) {
    AgentSession::AgentState state = session->state();
    if (!state.agent_id.empty() && state.running_job.empty()) idle.push_back(state.agent_id);
  }
  Wake(idle);
}

void Dispatcher::Run() {
  std::set<std::string> agents;
  absl::Time requested;
  {
    absl::MutexLock lock(&mu_);
    agents.swap(pending_);
    requested = first_wake_;
    scheduled_ = false;
  }
  std::vector<std::string> idle = IdleLocal(std::vector<std::string>(agents.begin(), agents.end()));
  if (idle.empty()) return;
  absl::StatusOr<std::vector<store::ClaimedJob>> claimed = store_.ClaimJobs(idle, lease_);
  if (!claimed.ok()) {
    // Unavailable: the periodic sweep retries. AlreadyExists: another coordinator
    // claimed for one of these agents at the same moment; retry the rest soon.
    if (!absl::IsUnavailable(claimed.status())) {
      ::fleetmark::Log(::fleetmark::LogLevel::kWarning, absl::StrCat("claiming jobs: ", claimed.status().message()));
    }
    return;
  }
  Deliver(*std::move(claimed), requested);
}

std::vector<std::string> Dispatcher::IdleLocal(const std::vector<std::string>& agent_ids) const {
  std::vector<std::string> idle;
  for (const std::string& agent_id : agent_ids) {
    std::shared_ptr<AgentSession> session = registry_.Find(agent_id);
    if (session == nullptr || session->closing()) continue;
    if (session->state().running_job.empty()) idle.push_back(agent_id);
  }
  return idle;
}

void Dispatcher::Deliver(std::vector<store::ClaimedJob> jobs, absl::Time requested) {
  // Mark every agent busy first, so a Wake running meanwhile does not try to claim
  // for agents whose assignment is about to be pushed.
  std::vector<std::shared_ptr<AgentSession>> sessions;
  sessions.reserve(jobs.size());
  for (const store::ClaimedJob& job : jobs) {
    std::shared_ptr<AgentSession> session = registry_.Find(job.agent_id);
    // A session that vanished meanwhile leaves the job assigned: its lease expires and
    // the sweep re-queues it.
    if (session != nullptr) {
      session->UpdateState([&](AgentSession::AgentState& s) {
        s.running_job = job.assignment.job_id();
        s.cancel_sent.clear();
        s.current_case.clear();
      });
    }
    sessions.push_back(std::move(session));
  }
  const size_t pushed = std::count_if(sessions.begin(), sessions.end(), [](const auto& s) { return s != nullptr; });
  Push(std::move(jobs), std::move(sessions));
  // Pushes beyond the first chunk of a large fan-out are still queued on the executor.
  if (metrics_ != nullptr && requested != absl::InfinitePast()) {
    const double seconds = absl::ToDoubleSeconds(SteadyNow() - requested);
    for (size_t i = 0; i < pushed; ++i) metrics_->dispatch_seconds.Observe(seconds);
  }
}

void Dispatcher::Push(std::vector<store::ClaimedJob> jobs, std::vector<std::shared_ptr<AgentSession>> sessions) {
  // A large fan-out (one run to many agents) is pushed by several executor threads:
  // each push copies and serialises the plan.
  constexpr size_t kChunk = 128;
  while (jobs.size() > kChunk) {
    const size_t from = jobs.size() - kChunk;
    std::vector<store::ClaimedJob> chunk(std::make_move_iterator(jobs.begin() + from),
                                         std::make_move_iterator(jobs.end()));
    std::vector<std::shared_ptr<AgentSession>> chunk_sessions(std::make_move_iterator(sessions.begin() + from),
                                                              std::make_move_iterator(sessions.end()));
    jobs.resize(from);
    sessions.resize(from);
    executor_.Post([this, chunk = std::move(chunk), chunk_sessions = std::move(chunk_sessions)]() mutable {
      Push(std::move(chunk), std::move(chunk_sessions));
    });
  }
  for (size_t i = 0; i < jobs.size(); ++i) {
    if (sessions[i] == nullptr) continue;
    v1::CoordinatorMessage message;
    *message.mutable_assignment() = std::move(jobs[i].assignment);
    sessions[i]->Send(std::move(message));
  }
}

}  // namespace fleetmark::service
