#include "coordinator/service/agent_registry.h"

namespace fleetmark::service {

std::shared_ptr<AgentSession> AgentRegistry::Add(const std::string& agent_id, std::shared_ptr<AgentSession> session) {
  absl::MutexLock lock(&mu_);
  std::shared_ptr<AgentSession>& slot = sessions_[agent_id];
  std::shared_ptr<AgentSession> previous = std::move(slot);
  slot = std::move(session);
  return previous;
}

bool AgentRegistry::Remove(const std::string& agent_id, const AgentSession* session) {
  absl::MutexLock lock(&mu_);
  auto it = sessions_.find(agent_id);
  if (it == sessions_.end() || it->second.get() != session) return false;
  sessions_.erase(it);
  return true;
}

std::shared_ptr<AgentSession> AgentRegistry::Find(const std::string& agent_id) const {
  absl::MutexLock lock(&mu_);
  auto it = sessions_.find(agent_id);
  return it == sessions_.end() ? nullptr : it->second;
}

std::vector<std::shared_ptr<AgentSession>> AgentRegistry::All() const {
  absl::MutexLock lock(&mu_);
  std::vector<std::shared_ptr<AgentSession>> all;
  all.reserve(sessions_.size());
  for (const auto& [id, session] : sessions_) all.push_back(session);
  return all;
}

size_t AgentRegistry::size() const {
  absl::MutexLock lock(&mu_);
  return sessions_.size();
}

}  // namespace fleetmark::service
