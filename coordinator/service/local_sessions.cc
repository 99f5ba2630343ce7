#include "coordinator/service/local_sessions.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "coordinator/service/secrets.h"

namespace fleetmark::service {

LocalSessions::LocalSessions() : prefix_(absl::StrCat(RandomToken().substr(0, 16), "-")) {}

std::string LocalSessions::NewId() { return absl::StrCat(prefix_, next_.fetch_add(1)); }

void LocalSessions::Opened(const std::shared_ptr<AgentSession>& session) {
  absl::MutexLock lock(&mu_);
  open_[session->session_id()] = session;
}

void LocalSessions::Done(const std::string& session_id) {
  absl::MutexLock lock(&mu_);
  open_.erase(session_id);
}

bool LocalSessions::EndedHere(const std::string& session_id) const {
  if (!absl::StartsWith(session_id, prefix_)) return false;
  std::shared_ptr<AgentSession> session;
  {
    absl::MutexLock lock(&mu_);
    auto it = open_.find(session_id);
    if (it != open_.end()) session = it->second.lock();
  }
  return session == nullptr || session->closing();
}

}  // namespace fleetmark::service
