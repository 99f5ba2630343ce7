// The schedules slice of Store (store.h): schedules, the default one seeded from
// --nightly_plan, and their fires (each (schedule, slot) fires once across
// coordinators). Services that use only schedules take a ScheduleStore&.
// Thread-safety: every method may be called from any thread; each call borrows one
// pooled connection for its duration. Errors: Unavailable when the database is down
// (callers retry), NotFound for unknown ids/names, InvalidArgument for malformed ids,
// AlreadyExists for duplicate names, FailedPrecondition for forbidden state changes.
// Ids are UUID strings. Times are absl::Time (UTC).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "coordinator/store/new_run.h"
#include "fleetmark/v1/control.pb.h"

namespace fleetmark::store {

// Schedules and their fires; PgStore and MemoryStore implement it as Store.
class ScheduleStore {
 public:
  virtual ~ScheduleStore() = default;

  // Schedule names are 1 to 64 characters from [A-Za-z0-9._-], as agent names
  // (InvalidArgument naming `schedule.name` otherwise).
  // AlreadyExists if the name is taken (the message says to delete it first to replace
  // it). `next_fire` is stored for display.
  virtual absl::StatusOr<v1::Schedule> CreateSchedule(const v1::Schedule& schedule, absl::Time next_fire) = 0;
  // Installs a default schedule (the coordinator's --nightly_plan) once per database,
  // remembered in seeded_defaults: if a schedule of that name exists it is updated
  // (cron, plan, selector, quick, next fire); else, if this default was seeded before
  // (and so deleted by a user since), nothing changes; else it is created. Coordinators
  // seeding at once are serialised on the seeded_defaults row: one creates, the others
  // update. InvalidArgument for a bad name or empty cron.
  enum class SeedOutcome { kCreated, kUpdated, kLeftDeleted };
  virtual absl::StatusOr<SeedOutcome> SeedDefaultSchedule(const v1::Schedule& schedule, absl::Time next_fire) = 0;
  // Ordered by name, each with its latest fire (last_fire_slot_unix_ns, last_fire_outcome:
  // "run <run id>" or why no run was created, e.g. "skipped: no online agent matches ...").
  virtual absl::StatusOr<std::vector<v1::Schedule>> ListSchedules() = 0;
  virtual absl::Status DeleteSchedule(const std::string& name) = 0;
  virtual absl::Status SetScheduleNextFire(const std::string& name, absl::Time next_fire) = 0;
  // Pauses or resumes schedule `name` (Schedule.paused). NotFound if there is none.
  virtual absl::Status SetSchedulePaused(const std::string& name, bool paused) = 0;
  // Fires `schedule_name` for `slot` exactly once across coordinators: inserts
  // (schedule, slot) into schedule_fires and creates `run` in the same transaction.
  // Returns the run, or nullopt if that slot already fired. With no agent in
  // `run.agent_ids` the slot is still recorded (it fired, matching nobody; `skipped`
  // says why and is shown as the schedule's last_fire_outcome) and the returned RunInfo
  // has an empty run_id.
  virtual absl::StatusOr<std::optional<v1::RunInfo>> FireSchedule(const std::string& schedule_name, absl::Time slot,
                                                                  const NewRun& run,
                                                                  const std::string& skipped = "") = 0;
  // The latest fired slot of a schedule, or nullopt if it never fired.
  virtual absl::StatusOr<std::optional<absl::Time>> LastFiredSlot(const std::string& schedule_name) = 0;
};

}  // namespace fleetmark::store
