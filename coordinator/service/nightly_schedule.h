// The default nightly schedule of `fleetmark-coordinator --nightly_plan FILE`: seeded
// into the database at start, once per database (a user's `fleetmark schedules delete
// nightly` survives restarts, with a warning in the log that says how to have it again).
//
//   FLEETMARK_RETURN_IF_ERROR(SeedNightlySchedule(store, clock, {.plan_file = "plans/s1.txtpb"}));
//
// Thread-safety: call from one thread (the coordinator's start).
#pragma once

#include <string>

#include "absl/status/status.h"
#include "coordinator/store/schedule_store.h"
#include "engine/common/clock.h"

namespace fleetmark::service {

struct NightlySchedule {
  std::string plan_file;           // --nightly_plan (required)
  std::string cron = "0 2 * * *";  // --nightly_cron, UTC
  std::string selector;            // --nightly_selector ("" = every agent)
};

// Loads and validates the plan (InvalidArgument "nightly_plan: ..."), parses the cron,
// checks the run each fire will build (CheckRun, run_builder.h: "nightly_plan refused:
// ..."), then stores the schedule "nightly" with its next fire after `clock`'s now unless
// the database has or had one (ScheduleStore::SeedDefaultSchedule). Store errors as the store's.
absl::Status SeedNightlySchedule(store::ScheduleStore& store, const Clock& clock, const NightlySchedule& nightly);

}  // namespace fleetmark::service
