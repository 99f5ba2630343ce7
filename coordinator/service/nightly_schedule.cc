#include "coordinator/service/nightly_schedule.h"

#include "absl/strings/str_cat.h"
#include "coordinator/scheduler/cron.h"
#include "coordinator/service/run_builder.h"
#include "engine/common/log.h"
#include "engine/common/status_macros.h"
#include "engine/plan/plan.h"

namespace fleetmark::service {

absl::Status SeedNightlySchedule(store::ScheduleStore& store, const Clock& clock, const NightlySchedule& nightly) {
  auto parsed = engine::LoadPlanFile(nightly.plan_file);
  if (!parsed.ok()) return absl::InvalidArgumentError(absl::StrCat("nightly_plan: ", parsed.status().message()));
  absl::Status valid = engine::ValidatePlan(*parsed);
  if (!valid.ok()) return absl::InvalidArgumentError(absl::StrCat("nightly_plan: ", valid.message()));
  FLEETMARK_ASSIGN_OR_RETURN(scheduler::CronSchedule cron, scheduler::CronSchedule::Parse(nightly.cron));
  v1::Schedule schedule;
  schedule.set_name("nightly");
  schedule.set_cron(nightly.cron);
  *schedule.mutable_plan() = parsed->plan;
  schedule.set_selector(nightly.selector);
  // The rules each of its fires checks (run_builder.h).
  FLEETMARK_RETURN_IF_ERROR(
      CheckRun(schedule.plan(), schedule.quick(), schedule.filter(), schedule.selector(), "nightly_plan").status());
  // Seeded once per database: a user's `schedules delete nightly` survives restarts.
  FLEETMARK_ASSIGN_OR_RETURN(
      store::ScheduleStore::SeedOutcome outcome,
      store.SeedDefaultSchedule(schedule, cron.NextAfter(clock.Now()).value_or(absl::InfiniteFuture())));
  if (outcome == store::ScheduleStore::SeedOutcome::kLeftDeleted) {
    ::fleetmark::Log(::fleetmark::LogLevel::kWarning,
                     absl::StrCat("schedule \"nightly\" was deleted from this database, so --nightly_plan ",
                                  "does not re-create it; to have it again: fleetmark schedules create nightly ",
                                  nightly.plan_file, " --cron '", nightly.cron, "'", " --select '",
                                  (nightly.selector.empty() ? "all" : nightly.selector), "'"));
  }
  return absl::OkStatus();
}

}  // namespace fleetmark::service
