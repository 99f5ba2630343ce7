// The agent streams this coordinator process opened, by session id, and which of them
// are still open: what a coordinator knows for certain about a session recorded in the
// database (agents.session_id). A session id is "<key>-<n>": a random key drawn once per
// process and a counter, so an id with this process's key that is no longer open here
// has provably ended (store::AgentRegistration::session_ended_here); an id of another
// process (another coordinator, or this one before a restart) says nothing.
//
//   LocalSessions sessions;
//   auto session = std::make_shared<AgentSession>(sessions.NewId(), peer);
//   sessions.Opened(session);  ...  sessions.Done(session->session_id());
//   bool certain = sessions.EndedHere(recorded_session_id);
//
// Thread-safety: every method is safe from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "coordinator/service/agent_stream.h"

namespace fleetmark::service {

class LocalSessions {
 public:
  LocalSessions();

  // A new session id of this process.
  std::string NewId();
  // `session` (made with NewId) is open until Done(its id).
  void Opened(const std::shared_ptr<AgentSession>& session);
  void Done(const std::string& session_id);
  // True if `session_id` is one of this process's ids and its stream has ended or is
  // ending (AgentSession::closing); false for any other id.
  bool EndedHere(const std::string& session_id) const;

 private:
  const std::string prefix_;  // "<key>-"
  std::atomic<uint64_t> next_{1};
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, std::weak_ptr<AgentSession>> open_ ABSL_GUARDED_BY(mu_);
};

}  // namespace fleetmark::service
