// What a new run asks for (NewRun): the one input of RunStore::CreateRun and
// CreateRunAndClaim, ScheduleStore::FireSchedule and ChangeStore's confirmation runs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "fleetmark/v1/plan.pb.h"

namespace fleetmark::store {

struct NewRun {
  v1::Plan plan;  // validated by the caller
  std::string selector;
  bool quick = false;
  std::string filter;
  std::string submitted_by;
  std::vector<std::string> agent_ids;  // one job each; must be non-empty
  uint32_t max_attempts = 3;           // 1..100
  uint32_t cases_total = 0;            // per job, from ExpandCases
  // The case ids each job measures (after --quick and --filter); results for other case
  // ids are rejected. Empty: not recorded, results are not checked against the plan.
  std::vector<std::string> case_ids;
  // > 0: each job expires this long after the run is created: a job still queued then
  // (its agent never took it, e.g. it stayed offline) fails as infrastructure at the
  // next ExpireLeases. 0 = jobs wait for their agents as long as it takes.
  absl::Duration queue_expiry = absl::ZeroDuration();
};

}  // namespace fleetmark::store
