#include "coordinator/service/revocation.h"

#include <map>
#include <memory>

#include "absl/strings/str_cat.h"

namespace fleetmark::service {

namespace {

// Ends the streams of `by_agent` (agent id -> its live session here) that the store says
// must go; returns their names.
absl::StatusOr<std::vector<std::string>> EndStreamsOf(store::TokenStore& store,
                                                      std::map<std::string, std::shared_ptr<AgentSession>>& by_agent) {
  std::vector<std::string> ended;
  if (by_agent.empty()) return ended;
  std::vector<std::string> ids, sessions;
  ids.reserve(by_agent.size());
  sessions.reserve(by_agent.size());
  for (const auto& [agent_id, session] : by_agent) {
    ids.push_back(agent_id);
    sessions.push_back(session->session_id());
  }
  absl::StatusOr<std::vector<store::TokenStore::Disconnect>> found = store.AgentsToDisconnect(ids, sessions);
  if (!found.ok()) return found.status();
  for (const store::TokenStore::Disconnect& agent : *found) {
    const std::shared_ptr<AgentSession>& session = by_agent[agent.agent_id];
    if (session->closing()) continue;
    ended.push_back(session->state().name);
    if (agent.identity_in_use) {
      session->Refuse(grpc::StatusCode::ABORTED, agent.reason, true, true);
    } else {
      session->Refuse(grpc::StatusCode::PERMISSION_DENIED, agent.reason, false);
    }
  }
  return ended;
}

}  // namespace

absl::StatusOr<std::vector<std::string>> EndRevokedAgentStreams(store::TokenStore& store, AgentRegistry& registry) {
  std::map<std::string, std::shared_ptr<AgentSession>> by_agent;
  for (const std::shared_ptr<AgentSession>& session : registry.All()) {
    const std::string agent_id = session->state().agent_id;
    if (!agent_id.empty() && !session->closing()) by_agent[agent_id] = session;
  }
  return EndStreamsOf(store, by_agent);
}

absl::StatusOr<bool> EndStreamIfRevoked(store::TokenStore& store, const std::string& agent_id,
                                        const std::shared_ptr<AgentSession>& session) {
  std::map<std::string, std::shared_ptr<AgentSession>> by_agent{{agent_id, session}};
  absl::StatusOr<std::vector<std::string>> ended = EndStreamsOf(store, by_agent);
  if (!ended.ok()) return ended.status();
  return !ended->empty();
}

}  // namespace fleetmark::service
