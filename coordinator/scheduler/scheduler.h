// The schedule runner: fires each schedule's cron slots (UTC) as runs, exactly once
// per (schedule, slot) even with several coordinators on one database (the store's
// unique fire key decides who fires). Missed slots are not replayed: after downtime
// only the latest slot within `catch_up` fires.
//
//   ScheduleRunner runner(store, clock, resolve_agents, options);
//   std::vector<v1::RunInfo> fired = runner.Tick();   // called every sweep interval
//
// Thread-safety: Tick() must not run concurrently with itself (one sweeper thread);
// the rest of the coordinator may use the store meanwhile.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "engine/common/clock.h"
#include "coordinator/store/schedule_store.h"

namespace fleetmark::scheduler {

struct ScheduleRunnerOptions {
  // A slot older than this when first noticed is skipped (not fired late).
  absl::Duration catch_up = absl::Minutes(10);
  uint32_t max_attempts = 3;
};

// Builds the run of a fired schedule: agents matching the selector and the plan's
// case count. Errors (no online agent matches, a bad selector) are logged once per slot
// (by the coordinator that records the fire) and the slot is recorded as fired with
// "skipped: <error>" as its outcome (Schedule.last_fire_outcome). A slot already
// recorded is not built again.
using RunBuilder = std::function<absl::StatusOr<store::NewRun>(const v1::Schedule& schedule)>;

class ScheduleRunner {
 public:
  // `store` and `clock` must outlive the runner.
  ScheduleRunner(store::ScheduleStore& store, const Clock& clock, RunBuilder build_run,
                 ScheduleRunnerOptions options = {});

  // Fires every schedule whose latest slot at or before now (within catch_up) has not
  // fired yet, and records each schedule's next fire time. Returns the runs this call
  // created (runs with no matching agent are not returned). Errors: the store's.
  // A paused schedule's due slot is recorded as fired with "skipped: paused" (so it
  // does not fire late on resume) and builds nothing.
  absl::StatusOr<std::vector<v1::RunInfo>> Tick();

  // Fires schedule `name` now, once (`schedules run`), paused or not, through the same
  // build and FireSchedule path as a slot, with the clock's now as its slot (shown as the
  // last fire; a cron slot at or before it that has not fired yet is then not fired).
  // Returns the run created. Errors: NotFound (no such schedule), the builder's
  // (FailedPrecondition when no online agent matches; nothing is recorded), the store's.
  // Safe to call concurrently with Tick() (the store's fire key decides).
  absl::StatusOr<v1::RunInfo> RunNow(const std::string& name);

 private:
  store::ScheduleStore& store_;
  const Clock& clock_;
  RunBuilder build_run_;
  ScheduleRunnerOptions options_;
};

}  // namespace fleetmark::scheduler
