// The run builder: every run the coordinator creates from a plan — `submit` (SubmitRun),
// each schedule fire (scheduler::ScheduleRunner) and each confirmation run of the change
// monitor (change_monitor.h) — is built here, and every rule a
// submitted run must pass is checked here, once: the plan (engine::ValidatePlan), its
// size on the agent stream (CheckPlanDeliverable), the --filter (SelectedCaseIds,
// engine/plan/case_filter.h), the selector (Selector::Parse), --queue_offline
// (CheckQueueOffline). A schedule is checked by the same rules when it is created
// (CheckSchedule) and again at each fire. The CLI checks the same rules, through the
// same functions, before connecting.
//
//   RunBuilder runs(store, clock, {.max_attempts = 3});
//   FLEETMARK_ASSIGN_OR_RETURN(store::NewRun run, runs.Submitted(request));
//
// Thread-safety: immutable after construction; Submitted, Scheduled, OnAgent and
// CheckSchedule may run concurrently (the executor's threads and the sweeper's).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "coordinator/service/selector.h"
#include "coordinator/store/agent_store.h"
#include "coordinator/store/new_run.h"
#include "engine/common/clock.h"
#include "fleetmark/v1/control.pb.h"

namespace fleetmark::service {

// Bytes of the CoordinatorMessage that delivers a job of `plan` (with `quick` and
// `filter`) to an agent, with the longest ids and attempt number a job can have.
size_t JobAssignmentBytes(const v1::Plan& plan, bool quick, const std::string& filter);

// The largest job assignment the agent stream carries: the smaller of the
// coordinator's and the agent's message limits (engine/common/message_limits.h).
size_t MaxJobAssignmentBytes();

// OK if a job of `plan` fits `limit_bytes` (JobAssignmentBytes); else InvalidArgument
// naming `field`, the assignment's size and the limit: a plan accepted is a plan every
// agent of this version can receive.
absl::Status CheckPlanDeliverable(const v1::Plan& plan, bool quick, const std::string& filter, const std::string& field,
                                  size_t limit_bytes = MaxJobAssignmentBytes());

// What CheckRun found: the selected case ids (after `quick` and `filter`) and the
// parsed selector.
struct CheckedRun {
  std::vector<std::string> case_ids;
  Selector selector;
};

// The rules of a run's plan, filter and selector, in this order: ValidatePlan,
// CheckPlanDeliverable, SelectedCaseIds, Selector::Parse. InvalidArgument from the
// first that fails; plan errors read "`field` refused: ..." (field "plan" for submit,
// "schedule.plan" for a schedule, "nightly_plan" for --nightly_plan), filter errors
// name --filter, selector errors the term.
absl::StatusOr<CheckedRun> CheckRun(const v1::Plan& plan, bool quick, const std::string& filter,
                                    const std::string& selector, absl::string_view field);

struct RunBuilderOptions {
  uint32_t max_attempts = 3;                // NewRun::max_attempts
  v1::Preconditions default_preconditions;  // for plans without preconditions (--default_preconditions)
};

class RunBuilder {
 public:
  // `store` and `clock` must outlive the builder.
  RunBuilder(store::AgentStore& store, const Clock& clock, RunBuilderOptions options);

  // The run a SubmitRun request creates: submitted_by "cli" when the request has none;
  // queue_offline_ms > 0 (submit --queue_offline, CheckQueueOffline's range, named
  // queue_offline_ms) also selects matching offline agents and sets the jobs' expiry
  // (NewRun::queue_expiry). Errors as Build.
  absl::StatusOr<store::NewRun> Submitted(const v1::SubmitRunRequest& request) const;

  // The run a fire of `schedule` creates (scheduler::RunBuilder): submitted_by
  // "schedule:<name>", online agents only. Errors as Build.
  absl::StatusOr<store::NewRun> Scheduled(const v1::Schedule& schedule) const;

  // A run on one agent the caller chose, online or not (the change monitor's confirmation
  // runs, inside the store's transaction): `plan` as stored with the run it repeats (its
  // preconditions kept: no default_preconditions added), checked by CheckRun ("plan")
  // with `filter` and the selector "name=<agent_name>"; jobs expire `queue_expiry` after
  // the run is created (0 = never). Errors as CheckRun.
  absl::StatusOr<store::NewRun> OnAgent(const v1::Plan& plan, bool quick, const std::string& filter,
                                        const std::string& agent_id, const std::string& agent_name,
                                        std::string submitted_by, absl::Duration queue_expiry) const;

  // CreateSchedule's checks: the cron (scheduler/cron.h), then CheckRun as each fire
  // does ("schedule.plan"; no agents are selected). Returns the schedule's first fire
  // after the clock's now; InvalidArgument if the cron never fires in the next 5 years.
  absl::StatusOr<absl::Time> CheckSchedule(const v1::Schedule& schedule) const;

 private:
  // The plan gets `default_preconditions` when it has none; CheckRun ("plan"); then the
  // agents matching the selector (online ones, and offline ones with `queue_offline`),
  // skipping quarantined agents unless the selector admits them. InvalidArgument for a
  // bad queue_offline, plan, filter or selector; FailedPrecondition if no agent matches
  // (naming the selector and the agents known / online / quarantined).
  absl::StatusOr<store::NewRun> Build(const v1::Plan& plan, const std::string& selector, bool quick,
                                      const std::string& filter, std::string submitted_by,
                                      absl::Duration queue_offline) const;
  // The run of `checked` (CheckRun's result for `plan`, `quick` and `filter`) on
  // `agent_ids`: every field of a NewRun filled in one place.
  store::NewRun NewRunOf(const v1::Plan& plan, const std::string& selector, bool quick, const std::string& filter,
                         std::string submitted_by, CheckedRun checked, std::vector<std::string> agent_ids,
                         absl::Duration queue_expiry) const;

  store::AgentStore& store_;
  const Clock& clock_;
  const RunBuilderOptions options_;
};

}  // namespace fleetmark::service
