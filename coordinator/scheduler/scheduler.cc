#include "coordinator/scheduler/scheduler.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "coordinator/scheduler/cron.h"
#include "engine/common/log.h"

namespace fleetmark::scheduler {

ScheduleRunner::ScheduleRunner(store::ScheduleStore& store, const Clock& clock, RunBuilder build_run,
                               ScheduleRunnerOptions options)
    : store_(store), clock_(clock), build_run_(std::move(build_run)), options_(options) {}

absl::StatusOr<std::vector<v1::RunInfo>> ScheduleRunner::Tick() {
  auto schedules = store_.ListSchedules();
  if (!schedules.ok()) return schedules.status();
  std::vector<v1::RunInfo> fired;
  const absl::Time now = clock_.Now();
  for (const v1::Schedule& schedule : *schedules) {
    absl::StatusOr<CronSchedule> cron = CronSchedule::Parse(schedule.cron());
    if (!cron.ok()) continue;  // rejected at creation; an old row cannot stop the others
    // Never fire a slot from before the schedule existed.
    const absl::Time created = absl::FromUnixNanos(schedule.created_unix_ns());
    absl::Duration horizon = std::min(options_.catch_up, now - created);
    std::optional<absl::Time> slot;
    if (horizon >= absl::ZeroDuration()) slot = cron->LatestAtOrBefore(now, horizon);
    // Only slots strictly after the creation fire: one created at 14:16:12 with
    // "16 * * * *" first fires at 15:16, as `schedules create` announced.
    if (slot && *slot <= created) slot.reset();
    // A slot that already fired (here or on another coordinator) is not built again:
    // building selects agents and would repeat its outcome every tick of the minute.
    if (slot && absl::ToUnixNanos(*slot) <= schedule.last_fire_slot_unix_ns()) slot.reset();
    if (slot && schedule.paused()) {
      auto result = store_.FireSchedule(schedule.name(), *slot, store::NewRun(), "skipped: paused");
      if (!result.ok()) return result.status();
    } else if (slot) {
      store::NewRun run;
      std::string skipped;
      absl::StatusOr<store::NewRun> built = build_run_(schedule);
      if (built.ok()) {
        run = *std::move(built);
      } else {
        skipped = absl::StrCat("skipped: ", built.status().message());
      }
      run.max_attempts = run.max_attempts == 0 ? options_.max_attempts : run.max_attempts;
      auto result = store_.FireSchedule(schedule.name(), *slot, run, skipped);
      if (!result.ok()) return result.status();
      // Logged by the coordinator whose fire was recorded: once per slot.
      if (result->has_value() && !skipped.empty()) {
        ::fleetmark::Log(
            ::fleetmark::LogLevel::kInfo,
            absl::StrCat("schedule \"", schedule.name(), "\" slot ",
                         absl::FormatTime("%Y-%m-%d %H:%M UTC", *slot, absl::UTCTimeZone()), " ", skipped));
      }
      if (result->has_value() && !(*result)->run_id().empty()) fired.push_back(**result);
    }
    if (std::optional<absl::Time> next = cron->NextAfter(now);
        next && absl::ToUnixNanos(*next) != schedule.next_fire_unix_ns()) {
      auto status = store_.SetScheduleNextFire(schedule.name(), *next);
      if (!status.ok()) return status;
    }
  }
  return fired;
}

absl::StatusOr<v1::RunInfo> ScheduleRunner::RunNow(const std::string& name) {
  auto schedules = store_.ListSchedules();
  if (!schedules.ok()) return schedules.status();
  auto it = std::find_if(schedules->begin(), schedules->end(), [&](const v1::Schedule& s) { return s.name() == name; });
  if (it == schedules->end()) return absl::NotFoundError(absl::StrCat("schedule \"", name, "\" not found"));
  absl::StatusOr<store::NewRun> run = build_run_(*it);
  if (!run.ok()) return run.status();
  if (run->max_attempts == 0) run->max_attempts = options_.max_attempts;
  auto result = store_.FireSchedule(name, clock_.Now(), *run, "");
  if (!result.ok()) return result.status();
  if (!result->has_value() || (*result)->run_id().empty()) {
    return absl::AbortedError(absl::StrCat("schedule \"", name, "\" fired at this instant already; try again"));
  }
  return **std::move(result);
}

}  // namespace fleetmark::scheduler
