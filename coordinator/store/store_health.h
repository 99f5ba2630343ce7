// Store: the agents' fleet health inside a job's transaction (agent_health.h rules over
// the agent's stored calibration results). Internal to coordinator/store/.
#pragma once

#include <string>

#include <pqxx/pqxx>

#include "coordinator/store/agent_health.h"
#include "coordinator/store/store.h"

namespace fleetmark::store::internal {

// After job `job_id` of `agent_id` (in run `run_id`) ended with `outcome` in `txn`:
// locks the agent row, updates its deferred streak and, when the job stored
// calibration results, its noise score; quarantines it when a rule says so and it is
// not quarantined yet. Throws what libpqxx throws (the caller's transaction maps it).
void UpdateAgentHealth(pqxx::work& txn, const std::string& agent_id, const std::string& job_id,
                       const JobOutcome& outcome, const HealthOptions& options);

}  // namespace fleetmark::store::internal
