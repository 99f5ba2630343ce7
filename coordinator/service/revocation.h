// Token revocation, agent removal and session takeover for connected agents: ends the
// streams of this coordinator's agents whose enrollment token is revoked or that were
// removed (`fleetmark agents remove`), so they get no new job, and those whose identity
// another session took over (store::AgentStore::RegisterAgent: one live session per agent
// fleet-wide), which get a retryable Refusal with identity_in_use (ABORTED): the agent
// stops its job and retries with backoff. Called by RevokeToken and
// RemoveAgent (on the coordinator that served them), on the "disconnect" notification
// their transactions send (the other coordinators sharing the database:
// notification_handler.h), and by the sweeper at every liveness flush (the safety net:
// within one heartbeat interval).
//
// Each such stream gets a Refusal (not retryable) — "enrollment token <id> revoked" or
// store::kAgentRemovedReason — and ends with PERMISSION_DENIED; the agent's reconnect
// with its credential is then refused at hello. A job a revoked agent was running is
// handled like a lost agent's: its lease expires and it is re-queued or failed
// (Store::ExpireLeases); a removed agent's jobs failed when it was removed.
//
// Thread-safety: safe from any thread; one database statement per call.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "coordinator/service/agent_registry.h"
#include "coordinator/store/token_store.h"

namespace fleetmark::service {

// Returns the names of the agents whose streams it ended. Errors: the store's
// (Unavailable while the database is down; nothing is ended then).
absl::StatusOr<std::vector<std::string>> EndRevokedAgentStreams(store::TokenStore& store, AgentRegistry& registry);

// The same check for one session that has just entered the registry: a revocation or
// removal committed between the agent's registration and that moment was announced while
// no coordinator held its stream (every "disconnect" notification found none), so the
// session is checked once more here. True when it refused the session. Errors: the
// store's (the liveness flush then catches it, within one heartbeat interval).
absl::StatusOr<bool> EndStreamIfRevoked(store::TokenStore& store, const std::string& agent_id,
                                        const std::shared_ptr<AgentSession>& session);

}  // namespace fleetmark::service
