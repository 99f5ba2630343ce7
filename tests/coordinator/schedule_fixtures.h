// Fixtures of the schedule runner's tests (scheduler_test.cc, sweeper_test.cc).
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "coordinator/scheduler/scheduler.h"
#include "coordinator/store/store.h"

namespace fleetmark::scheduler {

// A RunBuilder standing in for the coordinator's (coordinator/service/run_builder.h):
// each fire's run measures its schedule's plan (with its quick and filter) as one case
// on the one agent `agent_id`, submitted by "schedule:<name>".
inline RunBuilder BuildOnAgent(const std::string& agent_id) {
  return [agent_id](const v1::Schedule& s) -> absl::StatusOr<store::NewRun> {
    store::NewRun run;
    run.plan = s.plan();
    run.agent_ids = {agent_id};
    run.quick = s.quick();
    run.filter = s.filter();
    run.submitted_by = "schedule:" + s.name();
    run.cases_total = 1;
    return run;
  };
}

}  // namespace fleetmark::scheduler
