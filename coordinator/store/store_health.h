// Store: the agents' fleet health inside a job's transaction (agent_health.h rules over
// the agent's stored calibration results). Internal to coordinator/store/.
#pragma once

#include <string>
#include <vector>

#include <pqxx/pqxx>

#include "coordinator/store/agent_health.h"
#include "coordinator/store/store.h"

namespace fleetmark::store::internal {

// A job ended in the caller's transaction, for UpdateAgentsHealth.
struct EndedJob {
  std::string job_id;
  std::string agent_id;
  std::string run_id;
  const JobOutcome* outcome = nullptr;  // not owned; outlives the call
};

// After `ended` ended in `txn` (in this order): for each job that ran (not cancelled:
// that says nothing about the device) locks its agent's row (all of a batch's agents in
// id order, in one statement), updates its deferred streak and, when the job stored
// calibration results, its noise score; quarantines the agent when a rule says so and
// it is not quarantined yet. `ended` names each agent at most once (an agent has one
// live job). Throws what libpqxx throws (the caller's transaction maps it).
void UpdateAgentsHealth(pqxx::work& txn, const std::vector<EndedJob>& ended, const HealthOptions& options);

}  // namespace fleetmark::store::internal
