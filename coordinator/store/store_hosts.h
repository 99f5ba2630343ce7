// Store internals: the one-job-per-host rule in the job claims (ClaimJobs,
// CreateRunAndClaim), by coordinator/scheduler/same_host.h's TakeTurns.
#pragma once

#include <string>
#include <vector>

#include <pqxx/pqxx>

namespace fleetmark::store::internal {

// Of `agent_ids` (validated UUIDs, in the order they should be served), those that may
// be given a job in `txn`: every agent with no known host identity, and of the others
// none that must take turns (TakeTurns) with an agent holding an assigned or running
// job, or with an agent admitted before it in this call. With `only_with_queued_job`
// (ClaimJobs), an agent without a queued job is passed through but admits nothing (it
// will claim nothing, so it must not keep a neighbour waiting). Takes a transaction-level
// advisory lock per host involved, in a fixed order, so claims through several
// coordinators for agents of one host are serialized and each sees the others' commits.
std::vector<std::string> AgentsFreeToStart(pqxx::work& txn, const std::vector<std::string>& agent_ids,
                                           bool only_with_queued_job);

}  // namespace fleetmark::store::internal
