#include "coordinator/service/dispatcher.h"

#include <iostream>

namespace fleetmark::service {

Dispatcher::Dispatcher(store::Store& store, AgentRegistry& registry, Executor& executor,
                       absl::Duration lease)
    : store_(store), registry_(registry), executor_(executor), lease_(lease) {}

void Dispatcher::Wake(const std::vector<std::string>& agent_ids) {
  if (agent_ids.empty()) return;
  bool schedule = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
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
  {
    std::lock_guard<std::mutex> lock(mu_);
    agents.swap(pending_);
    scheduled_ = false;
  }
  std::vector<std::string> idle = IdleLocal(std::vector<std::string>(agents.begin(), agents.end()));
  if (idle.empty()) return;
  absl::StatusOr<std::vector<store::ClaimedJob>> claimed = store_.ClaimJobs(idle, lease_);
  if (!claimed.ok()) {
    // Unavailable: the periodic sweep retries. AlreadyExists: another coordinator
    // claimed for one of these agents at the same moment; retry the rest soon.
    if (!absl::IsUnavailable(claimed.status())) {
      std::cerr << "fleetmark-coordinator: claiming jobs: " << claimed.status().message() << "\n";
    }
    return;
  }
  Deliver(*std::move(claimed));
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

void Dispatcher::Deliver(std::vector<store::ClaimedJob> jobs) {
  // A large fan-out (one run to many agents) is pushed by several executor threads:
  // each push copies and serialises the plan.
  constexpr size_t kChunk = 128;
  while (jobs.size() > kChunk) {
    std::vector<store::ClaimedJob> chunk(std::make_move_iterator(jobs.end() - kChunk),
                                         std::make_move_iterator(jobs.end()));
    jobs.resize(jobs.size() - kChunk);
    executor_.Post([this, chunk = std::move(chunk)]() mutable { Deliver(std::move(chunk)); });
  }
  for (store::ClaimedJob& job : jobs) {
    std::shared_ptr<AgentSession> session = registry_.Find(job.agent_id);
    // A session that vanished meanwhile leaves the job assigned: its lease expires and
    // the sweep re-queues it.
    if (session == nullptr) continue;
    session->UpdateState([&](AgentSession::AgentState& s) {
      s.running_job = job.assignment.job_id();
      s.cancel_sent.clear();
    });
    v1::CoordinatorMessage message;
    *message.mutable_assignment() = std::move(job.assignment);
    session->Send(std::move(message));
  }
}

}  // namespace fleetmark::service
