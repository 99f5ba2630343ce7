// Telling a connected agent to stop a job that ended in the database (cancelled, failed
// by a lease sweep, ended through another coordinator): one Cancellation per job, sent
// only while the agent's session still runs that job. The agent stays busy until it
// reports the job finished.
//
// Thread-safety: safe from any thread (the session's state is updated under its lock).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "coordinator/service/agent_registry.h"
#include "coordinator/service/agent_stream.h"

namespace fleetmark::service {

// Sends a Cancellation for `job_id` with `reason` if `session` runs it and was not told
// yet (AgentState::cancel_sent); returns whether it sent one.
bool StopRunningJob(AgentSession& session, const std::string& job_id, const std::string& reason);

// StopRunningJob for each (agent id, job id) whose agent is connected here; ids of
// agents held elsewhere are ignored. Returns how many Cancellations were sent.
size_t StopJobs(const AgentRegistry& registry, const std::vector<std::pair<std::string, std::string>>& agent_jobs,
                const std::string& reason);

}  // namespace fleetmark::service
