// Token revocation for connected agents: ends the streams of this coordinator's agents
// whose enrollment token is revoked, so they get no new job. Called by RevokeToken (the
// coordinator that revoked) and by the sweeper at every liveness flush (coordinators
// sharing the database notice within one heartbeat interval).
//
// Each such stream gets a Refusal "enrollment token <id> revoked" (not retryable) and
// ends with PERMISSION_DENIED; the agent's reconnect is then refused at hello. A job it
// was running is handled like a lost agent's: its lease expires and it is re-queued or
// failed (Store::ExpireLeases).
//
// Thread-safety: safe from any thread; one database statement per call.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "coordinator/service/agent_registry.h"
#include "coordinator/store/store.h"

namespace fleetmark::service {

// Returns the names of the agents whose streams it ended. Errors: the store's
// (Unavailable while the database is down; nothing is ended then).
absl::StatusOr<std::vector<std::string>> EndRevokedAgentStreams(store::Store& store, AgentRegistry& registry);

}  // namespace fleetmark::service
