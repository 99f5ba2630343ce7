#include "coordinator/service/job_stop.h"

#include <memory>

namespace fleetmark::service {

bool StopRunningJob(AgentSession& session, const std::string& job_id, const std::string& reason) {
  bool stop = false;
  session.UpdateState([&](AgentSession::AgentState& s) {
    if (s.running_job == job_id && s.cancel_sent != job_id) {
      s.cancel_sent = job_id;
      stop = true;
    }
  });
  if (!stop) return false;
  v1::CoordinatorMessage cancel;
  cancel.mutable_cancellation()->set_job_id(job_id);
  cancel.mutable_cancellation()->set_reason(reason);
  session.Send(std::move(cancel));
  return true;
}

size_t StopJobs(const AgentRegistry& registry, const std::vector<std::pair<std::string, std::string>>& agent_jobs,
                const std::string& reason) {
  size_t sent = 0;
  for (const auto& [agent_id, job_id] : agent_jobs) {
    std::shared_ptr<AgentSession> session = registry.Find(agent_id);
    if (session != nullptr && StopRunningJob(*session, job_id, reason)) ++sent;
  }
  return sent;
}

}  // namespace fleetmark::service
