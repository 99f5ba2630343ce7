// The agents connected to this coordinator: agent id → its live session.
//
// A reconnect can race the old stream's end: Add replaces (and returns) the previous
// session, and Remove only removes the entry if it is still the given session
// (identity check), so the old stream's OnDone never unregisters the new one.
//
// Thread-safety: every method is safe from any thread.
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "coordinator/service/agent_stream.h"

namespace fleetmark::service {

class AgentRegistry {
 public:
  // Registers `session` for `agent_id`; returns the session it replaced (or null).
  std::shared_ptr<AgentSession> Add(const std::string& agent_id, std::shared_ptr<AgentSession> session);
  // Removes `agent_id` if it maps to `session`; returns whether it did.
  bool Remove(const std::string& agent_id, const AgentSession* session);
  std::shared_ptr<AgentSession> Find(const std::string& agent_id) const;
  std::vector<std::shared_ptr<AgentSession>> All() const;
  size_t size() const;

 private:
  mutable absl::Mutex mu_;
  std::unordered_map<std::string, std::shared_ptr<AgentSession>> sessions_ ABSL_GUARDED_BY(mu_);
};

}  // namespace fleetmark::service
